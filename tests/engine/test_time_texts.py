"""The texts of a moment (`clock.keeping_last`, `state.stamp`, `clock.rfc3339`): each formatter keeps the
texts of the last two datetimes it was given, and a machine's wire time is its storage stamp's second."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from engine.clock import keeping_last, rfc3339
from engine.store.state import stamp, wire_of_stamp


def test_the_last_two_moments_are_formatted_once_each() -> None:
    formatted: list[datetime] = []

    @keeping_last
    def text(when: datetime) -> str:
        formatted.append(when)
        return when.isoformat()

    now = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)
    lease_end = now + timedelta(minutes=5)
    later = now + timedelta(hours=1)
    assert [text(now), text(lease_end), text(now), text(lease_end)] == [
        now.isoformat(),
        lease_end.isoformat(),
        now.isoformat(),
        lease_end.isoformat(),
    ]
    assert formatted == [now, lease_end]
    assert text(later) == later.isoformat()
    assert text(now) == now.isoformat()  # the oldest of three went
    assert formatted == [now, lease_end, later, now]


def test_the_wire_text_is_the_storage_stamp_to_the_second() -> None:
    for when in (
        datetime(2026, 10, 6, 9, 0, tzinfo=UTC),
        datetime(2026, 10, 6, 9, 0, 59, 999_999, tzinfo=UTC),
        datetime(2026, 10, 6, 11, 30, 1, 5, tzinfo=timezone(timedelta(hours=2))),
    ):
        assert stamp(when) == when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert rfc3339(when) == when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert wire_of_stamp(stamp(when)) == rfc3339(when)
