"""`apc serve`'s timer loop on a database other servers share: their commits wake it to apply what is due,
a burst of them in one tick per WAKE_SECONDS (not a tick each: with N servers that is N-1 ticks per
commit), and the last commit of a burst is still followed by a tick."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import pytest

from engine.http import serve
from engine.http.serve import WAKE_SECONDS, _serve_until_stopped

if TYPE_CHECKING:
    from engine.core import Engine

BURST = 200


class Peers:
    """An engine whose store hears other servers' commits when the test says so; it notes each tick's start."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        self.heard: Callable[[list[str]], None] | None = None
        self.listening = asyncio.Event()

    @property
    def store(self) -> Peers:
        return self

    async def listen(self, on_change: Callable[[list[str]], None], stop: asyncio.Event) -> None:
        self.heard = on_change
        self.listening.set()
        await stop.wait()

    async def tick(self) -> None:
        self.ticks.append(asyncio.get_running_loop().time())

    def commit(self) -> None:
        assert self.heard is not None
        self.heard(["run-1"])


async def test_a_burst_of_peer_commits_ticks_once_per_window_and_the_last_one_is_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The periodic tick out of the way: every tick after the first is a wake-up by a peer's commit.
    monkeypatch.setattr(serve, "TICK_SECONDS", 600.0)
    loop = asyncio.get_running_loop()
    peers, stop = Peers(), asyncio.Event()
    serving = asyncio.create_task(_serve_until_stopped(cast("Engine", peers), stop))
    try:
        await peers.listening.wait()
        await asyncio.sleep(0.05)  # the first tick, at the start
        began = loop.time()
        for _ in range(BURST):
            peers.commit()
            await asyncio.sleep(0.001)
        last = loop.time()
        peers.commit()
        for _ in range(500):  # no timing asserted: the wait for the last commit's tick is bounded only
            if peers.ticks[-1] >= last:
                break
            await asyncio.sleep(0.01)
    finally:
        stop.set()
        await serving
    in_burst = [t for t in peers.ticks if began <= t <= last]
    # One tick per window begun in the burst, and one for the window open at its start.
    assert len(in_burst) <= (last - began) / WAKE_SECONDS + 1, (len(in_burst), last - began)
    # The last commit is followed by a tick: its wake-up (the periodic one is ten minutes away).
    assert peers.ticks[-1] >= last, (peers.ticks[-3:], last)
