"""How a check says what it expected: one exception per failed expectation, worded for the report.

Checks do not use `assert` (stripped under `python -O`, and its message is not a sentence). Each
helper raises `CheckFailed` with `expected …, got …`, the values shown as compact JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NoReturn

from conform.clock import parse_time

SHOWN_CHARS = 400


class CheckFailed(Exception):
    """The server's answer broke an expectation; the message is the report's FAIL line."""


class CheckSkipped(Exception):
    """The check cannot run against this server (a profile it does not offer, a clock too slow)."""


def show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1` (Python says it is); `1` and `1.0` are one number; a `near`
    time in either value matches a time within a second of it."""
    if isinstance(b, Near):
        return b.matches(a)
    if isinstance(a, Near):
        return a.matches(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def fail(message: str) -> NoReturn:
    raise CheckFailed(message)


def equal(what: str, got: Any, expected: Any) -> None:
    if not same(got, expected):
        fail(f"{what}: expected {show(expected)}, got {show(got)}")


def true(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def only(what: str, items: list[Any]) -> Any:
    """The one item of a list that must have exactly one."""
    if len(items) != 1:
        fail(f"{what}: expected exactly one, got {len(items)}: {show(items)}")
    return items[0]


TIME_SLACK_SECONDS = 1.0
"""How far two server times derived from one instant may differ: the wire has second precision."""


@dataclass(frozen=True)
class Near:
    """Inside an expected value: an RFC 3339 time within `TIME_SLACK_SECONDS` of `text`, for times a
    server derives from one instant it may write with another precision (a step's `due` from the
    write that made it ready)."""

    text: str

    def matches(self, value: Any) -> bool:
        try:
            return abs((parse_time(str(value)) - parse_time(self.text)).total_seconds()) <= TIME_SLACK_SECONDS
        except ValueError:
            return False

    def __str__(self) -> str:
        return f"about {self.text}"


def near(text: str) -> Near:
    return Near(text)


def equal_time(what: str, got: Any, expected: str, slack: float = TIME_SLACK_SECONDS) -> None:
    """`got` is an RFC 3339 time within `slack` seconds of `expected`."""
    try:
        difference = abs((parse_time(str(got)) - parse_time(expected)).total_seconds())
    except ValueError:
        fail(f"{what}: expected a time near {expected}, got {show(got)}")
    if difference > slack:
        fail(f"{what}: expected {expected}, got {show(got)}")


def between(what: str, got: Any, earliest: str, latest: str, slack: float = TIME_SLACK_SECONDS) -> None:
    """`got` is an RFC 3339 time from `earliest` to `latest`, give or take `slack` seconds."""
    try:
        when = parse_time(str(got))
        low, high = parse_time(earliest), parse_time(latest)
    except ValueError:
        fail(f"{what}: expected a time from {earliest} to {latest}, got {show(got)}")
    if not (low.timestamp() - slack <= when.timestamp() <= high.timestamp() + slack):
        fail(f"{what}: expected a time from {earliest} to {latest}, got {show(got)}")
