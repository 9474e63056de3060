"""How server data reads on screen: times, ages, assignments and JSON values, all as plain text.

Everything the server sent is untrusted text, so these helpers return `rich.text.Text` built from plain
strings (never markup) and the widgets only add styles.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from typing import Any

from rich.text import Text

from console.client.wire import GroupAssignee, PersonAssignee
from engine.document.fields import parse_datetime


class SortText(Text):
    """A cell that carries the value it sorts by, so a column sorts by time, not by its label."""

    def __init__(self, text: str = "", style: str = "", *, sort_value: Any = None) -> None:
        super().__init__(text, style=style, no_wrap=True, overflow="ellipsis")
        self.sort_value = sort_value if sort_value is not None else text
        self.row_key = ""


def sort_value(cell: Text) -> Any:
    """What a cell sorts by: its own sort value when it carries one, else its text."""
    return cell.sort_value if isinstance(cell, SortText) else cell.plain


def plain(value: object, style: str = "") -> Text:
    return SortText("" if value is None else str(value), style)


@lru_cache(maxsize=65536)
def _parsed(value: str) -> datetime | None:
    return parse_datetime(value)


def when(value: object) -> datetime | None:
    """A wire timestamp as a datetime; the same few thousand stamps come back on every refresh."""
    return _parsed(value) if isinstance(value, str) else None


def _unit(seconds: int) -> tuple[str, int]:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return unit, size
    return "s", 1


def span(seconds: float) -> str:
    """A duration in the largest whole unit: `45s`, `12m`, `3h`, `5d`."""
    whole = abs(int(seconds))
    unit, size = _unit(whole)
    return f"{whole // size}{unit}"


Cell = tuple[str, str, Any]
"""A cell before it becomes Text: label, style, sort value. Cheap to compare on every refresh."""

TimedCell = tuple[Cell, float]
"""A cell that reads differently as time passes, and the timestamp before which it reads the same."""


def cell_text(cell: Cell) -> SortText:
    return SortText(cell[0], cell[1], sort_value=cell[2])


def _grows_until(start: float, elapsed: int) -> float:
    """When a label counting up from `start` next changes (`3m` becomes `4m` at the next minute)."""
    _, size = _unit(elapsed)
    return start + (elapsed // size + 1) * size


def age_cell(now: datetime, since: object) -> TimedCell:
    moment = when(since)
    if moment is None:
        return ("", "", float("inf")), float("inf")
    start, elapsed = moment.timestamp(), int((now - moment).total_seconds())
    until = _grows_until(start, elapsed) if elapsed >= 0 else now.timestamp()
    return (span(elapsed), "", start), until


def age(now: datetime, since: object) -> Text:
    return cell_text(age_cell(now, since)[0])


def is_late(now: datetime, value: object, overdue: bool | None = None) -> bool:
    """The server's `overdue` when it gave one, else whether `due` has passed."""
    if overdue is not None:
        return overdue
    moment = when(value)
    return moment is not None and moment < now


def due_cell(now: datetime, value: object, late_style: str, overdue: bool | None = None) -> TimedCell:
    """`in 3h` or `2h late`, in the warning style once it has passed."""
    moment = when(value)
    if moment is None:
        return ("—", "dim", float("inf")), float("inf")
    end, seconds = moment.timestamp(), (moment - now).total_seconds()
    style = late_style if is_late(now, value, overdue) else ""
    if seconds < 0:
        late = int(-seconds)
        return (f"{span(late)} late", style, end), _grows_until(end, late)
    left = int(seconds)
    _, size = _unit(left)
    return (f"in {span(left)}", style, end), end - (left // size) * size


def due(now: datetime, value: object, late_style: str, overdue: bool | None = None) -> Text:
    return cell_text(due_cell(now, value, late_style, overdue)[0])


def stamp(value: object) -> str:
    """A wire timestamp shortened for a table: `2026-10-06 09:04`."""
    moment = when(value)
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ("" if value is None else str(value))


def assignee(assigned: GroupAssignee | PersonAssignee | None) -> str:
    if assigned is None:
        return ""
    return assigned["group"] if "group" in assigned else assigned["person"]


def short_id(run_id: str, keep: int = 6) -> str:
    """`r_7d64…`: enough of an id to recognise it in a sentence."""
    return run_id if len(run_id) <= keep + 1 else run_id[:keep] + "…"


def unique_prefix(ids: Iterable[str], least: int = 6) -> int:
    """How many leading characters tell these ids apart (at least `least`), for `short_id`."""
    distinct = set(ids)
    longest = max(map(len, distinct), default=0)
    need = least
    while need < longest and len({i[:need] for i in distinct}) < len(distinct):
        need += 1
    return need


def counted(count: int, noun: str) -> str:
    """`1 item`, `3 items`: a count and its noun, plural when it is not one."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def one_line(text: object, limit: int = 200) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def value_text(value: object, limit: int = 400) -> str:
    """A JSON value as one line: strings bare, everything else as compact JSON."""
    shown = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    )
    return one_line(shown, limit)


def pretty(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False)
