"""Time is injected: leases, `due`, waits, timeouts and signed URLs all read one clock.

Tests move a `ManualClock`; demos run a `SystemClock` faster than real time.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class SystemClock:
    """Wall-clock time, optionally running `speed` times faster from the moment it was created."""

    def __init__(self, speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._origin_wall = datetime.now(UTC)
        self._origin_mono = time.monotonic()

    def now(self) -> datetime:
        if self.speed == 1.0:
            return datetime.now(UTC)
        elapsed = (time.monotonic() - self._origin_mono) * self.speed
        return self._origin_wall + timedelta(seconds=elapsed)


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 10, 6, 9, 0, 0, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("start must be timezone-aware")

    def now(self) -> datetime:
        return self._now

    def advance(
        self, seconds: float = 0, *, minutes: float = 0, hours: float = 0, days: float = 0
    ) -> datetime:
        self._now += timedelta(seconds=seconds, minutes=minutes, hours=hours, days=days)
        return self._now

    def set(self, when: datetime) -> None:
        if when.tzinfo is None:
            raise ValueError("when must be timezone-aware")
        self._now = when


def rfc3339(when: datetime) -> str:
    """The wire form of a timestamp: UTC, second precision, `Z` suffix."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
