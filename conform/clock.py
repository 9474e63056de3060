"""The server's clock as seen from outside: timestamps on the wire, and an estimate of "now" there.

A server may run its clock faster than real time (the config declares how much), and its clock need
not agree with ours at all. Every write tells us the server's time at that moment (`startedAt`,
`updatedAt`, `expiresAt` minus the lease), so the runner keeps the latest such sample and moves it
forward by the elapsed real time times the declared speed. The estimate errs low (a write's time
is taken before its answer arrives, and the wire has second precision), which is the safe side for
"wait until the server's clock has passed T": the runner then polls until the server shows it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp with an offset (`Z` or `+02:00`); ValueError otherwise."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"no offset in {text!r}")
    return value.astimezone(UTC)


class ServerClock:
    def __init__(self, speed: float) -> None:
        self.speed = speed
        self._sample: tuple[float, datetime] | None = None

    def saw(self, server_time: datetime) -> None:
        """The server's clock read `server_time` no later than now."""
        if self._sample is None or server_time > self.now():
            self._sample = (time.monotonic(), server_time)

    def saw_text(self, text: object) -> None:
        if isinstance(text, str):
            try:
                self.saw(parse_time(text))
            except ValueError:
                return

    def now(self) -> datetime:
        """The server's time now, estimated from the latest sample (the local clock before any)."""
        if self._sample is None:
            return datetime.now(UTC)
        mono, server_time = self._sample
        return self._project(server_time, mono)

    def _project(self, server_time: datetime, mono: float) -> datetime:
        return server_time + timedelta(seconds=(time.monotonic() - mono) * self.speed)

    def real_seconds(self, server_seconds: float) -> float:
        """How long `server_seconds` of server time take in real time."""
        return server_seconds / self.speed
