"""How server data reads on screen: counts, spans, due dates and ages."""

from __future__ import annotations

from datetime import UTC, datetime

from console.views.format import age, counted, due, span

NOW = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


def test_a_count_takes_the_plural_unless_it_is_one() -> None:
    assert [counted(n, "earlier attempt") for n in (0, 1, 2, 1200)] == [
        "0 earlier attempts",
        "1 earlier attempt",
        "2 earlier attempts",
        "1,200 earlier attempts",
    ]


def test_spans_use_the_largest_whole_unit() -> None:
    assert [span(s) for s in (0, 59, 60, 3599, 3600, 86399, 86400, -7200)] == [
        "0s",
        "59s",
        "1m",
        "59m",
        "1h",
        "23h",
        "1d",
        "2h",
    ]


def test_due_reads_as_time_left_or_late_and_late_is_styled() -> None:
    soon = due(NOW, "2026-10-06T12:00:00Z", "bold red")
    late = due(NOW, "2026-10-05T09:00:00Z", "bold red")
    assert (soon.plain, str(soon.style)) == ("in 3h", "")
    assert (late.plain, str(late.style)) == ("1d late", "bold red")
    assert due(NOW, None, "bold red").plain == "—"
    assert str(due(NOW, "2026-10-06T12:00:00Z", "bold red", overdue=True).style) == "bold red"
    assert age(NOW, "2026-10-06T08:15:00+00:00").plain == "45m"
