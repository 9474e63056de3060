"""Demo time: how long simulated work takes, measured on the engine's clock.

Work times, think times and event delays are written in demo minutes, so a story reads the same at any
`--speed`. `ClockPace` waits them out on the demo's server clock, however fast it runs and while it is
paused; `ManualPace` advances a `ManualClock` instead, so tests drive whole stories without sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Protocol

from engine.clock import ManualClock


class Pace(Protocol):
    def now(self) -> datetime: ...

    async def wait(self, demo_seconds: float) -> None:
        """Let `demo_seconds` of demo time pass for the caller."""
        ...

    async def idle(self, real_seconds: float) -> None:
        """Wait between polls: real time, since polling is about the machine, not the story."""
        ...


class Steered(Protocol):
    """A clock a presenter can pause and speed up (the engine's ServerClock)."""

    @property
    def speed(self) -> float: ...

    @property
    def paused(self) -> bool: ...

    def now(self) -> datetime: ...


WAIT_SLICE_SECONDS = 0.25
"""The longest real sleep while waiting on demo time, so a pause or a speed change is noticed soon."""


class ClockPace:
    """Demo time on a clock that runs by itself: a wait lasts until the clock has moved that far, so
    it stretches while the clock is paused and shrinks when it is sped up."""

    def __init__(self, clock: Steered, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.clock = clock
        self._sleep = sleep

    @property
    def speed(self) -> float:
        return self.clock.speed

    def now(self) -> datetime:
        return self.clock.now()

    async def wait(self, demo_seconds: float) -> None:
        until = self.clock.now() + timedelta(seconds=max(demo_seconds, 0.0))
        while (left := (until - self.clock.now()).total_seconds()) > 0:
            real = WAIT_SLICE_SECONDS if self.clock.paused else left / self.clock.speed
            await self._sleep(min(real, WAIT_SLICE_SECONDS))

    async def idle(self, real_seconds: float) -> None:
        await self._sleep(real_seconds)


class ManualPace:
    """Waiting moves the manual clock; nothing sleeps."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock

    def now(self) -> datetime:
        return self.clock.now()

    async def wait(self, demo_seconds: float) -> None:
        self.clock.advance(max(demo_seconds, 0.0))
        await asyncio.sleep(0)

    async def idle(self, real_seconds: float) -> None:
        await asyncio.sleep(0)
