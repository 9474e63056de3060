"""Time is injected: leases, `due`, waits, timeouts and signed URLs all read one clock.

A server runs a `ServerClock` (its data folder's time, never going backwards); tests move a
`ManualClock`; benchmarks and the demo may run a bare `SystemClock` faster than real time.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
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


class ServerClock:
    """Server time for one data folder: it never goes backwards, across restarts included.

    At speed 1 server time is wall time. At speed N it runs N times faster from where the data folder
    left off: `resume_from` is the last server time the store recorded (`Store.server_time`), so a
    restart continues from it instead of jumping back to wall time, and server time does not run while
    the server is down (no burst of timers at start). The same holds when a folder that ran fast is
    started at speed 1: time resumes from its mark until wall time catches up. Within a process the
    clock is monotonic whatever the wall clock does.

    The time is `origin + (monotonic() - origin_mono) * speed`, floored by the last time issued; moving
    the origin (`_rebase`) is how `pause`, `resume` and `set_speed` steer it while it runs (a live
    demo's presenter does): paused, time stands still; resumed, it goes on from where it stood, never
    back. Once steered, the clock no longer catches up with wall time at speed 1, or a pause would
    be undone the moment it ended.
    """

    def __init__(
        self,
        speed: float = 1.0,
        resume_from: datetime | None = None,
        *,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if not speed > 0:
            raise ValueError("speed must be positive")
        if resume_from is not None and resume_from.tzinfo is None:
            raise ValueError("resume_from must be timezone-aware")
        self.speed = speed
        self.paused = False
        self._steered = False
        # The engine's thread reads it, and so does the console's (ages, the demo's pause): each change
        # and each reading happens whole, or a reading between `paused = False` and the rebase of
        # `resume` would run on from the old origin, jumping ahead by the whole pause, for good.
        self._lock = threading.Lock()
        self._wall = wall
        self._monotonic = monotonic
        start = wall()
        ahead = resume_from is not None and (speed != 1.0 or resume_from > start)
        self._last = resume_from if ahead and resume_from is not None else start
        self._rebase(self._last)

    def _rebase(self, at: datetime) -> None:
        self._origin = at
        self._origin_mono = self._monotonic()

    def now(self) -> datetime:
        with self._lock:
            return self._now()

    def _now(self) -> datetime:
        if self.paused:
            return self._last
        current = self._origin + timedelta(seconds=(self._monotonic() - self._origin_mono) * self.speed)
        if self.speed == 1.0 and not self._steered:
            current = max(current, self._wall())
        self._last = max(current, self._last)
        return self._last

    def catch_up(self, at: datetime) -> None:
        """Move on to `at` if it is later than now (another server's clock on the same database), and
        run on from there at this speed."""
        with self._lock:
            if not self.paused and at > self._now():
                self._last = at
                self._rebase(at)

    def pause(self) -> None:
        """Stop server time where it is now."""
        with self._lock:
            if not self.paused:
                self._rebase(self._now())
                self.paused = self._steered = True

    def resume(self) -> None:
        """Let server time run on from where it stood."""
        with self._lock:
            if self.paused:
                self.paused = False
                self._rebase(self._last)

    def set_speed(self, speed: float) -> None:
        """Run `speed` times faster than real time from now on (paused or not)."""
        if not speed > 0:
            raise ValueError("speed must be positive")
        with self._lock:
            self._rebase(self._now())
            self.speed, self._steered = speed, True


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


def keeping_last(fmt: Callable[[datetime], str]) -> Callable[[datetime], str]:
    """`fmt`, keeping the texts of the last two datetimes it was given: a write formats its one moment
    several times, with another in between (a lease's end), and datetimes are immutable (those kept
    cannot be freed and their ids reused)."""
    Kept = tuple[datetime | None, str]
    kept: list[tuple[Kept, Kept]] = [((None, ""), (None, ""))]

    @functools.wraps(fmt)
    def format(when: datetime) -> str:
        last, before = kept[0]  # one list item, replaced whole: threads see both slots or neither
        if last[0] is when:
            return last[1]
        if before[0] is when:
            return before[1]
        text = fmt(when)
        kept[0] = ((when, text), last)
        return text

    return format


@keeping_last
def rfc3339(when: datetime) -> str:
    """The wire form of a timestamp: UTC, second precision, `Z` suffix (`isoformat`'s arguments by
    position: parsing them by keyword costs it more)."""
    return when.astimezone(UTC).isoformat("T", "seconds")[:-6] + "Z"
