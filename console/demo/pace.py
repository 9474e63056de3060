"""Demo time: how long simulated work takes, measured on the engine's clock.

Work times, think times and event delays are written in demo minutes, so a story reads the same at any
`--speed`. `ClockPace` turns them into real sleeps for a clock running `speed` times faster than wall
time; `ManualPace` advances a `ManualClock` instead, so tests drive whole stories without sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

from engine.clock import Clock, ManualClock


class Pace(Protocol):
    def now(self) -> datetime: ...

    async def wait(self, demo_seconds: float) -> None:
        """Let `demo_seconds` of demo time pass for the caller."""
        ...

    async def idle(self, real_seconds: float) -> None:
        """Wait between polls: real time, since polling is about the machine, not the story."""
        ...


class ClockPace:
    def __init__(
        self, clock: Clock, speed: float, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.clock = clock
        self.speed = speed
        self._sleep = sleep

    def now(self) -> datetime:
        return self.clock.now()

    async def wait(self, demo_seconds: float) -> None:
        await self._sleep(max(demo_seconds, 0.0) / self.speed)

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
