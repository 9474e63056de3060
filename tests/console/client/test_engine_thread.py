"""The embedded engine's own thread: calls are handed over and answered, errors and cancellation cross
back, and closing ends the thread with nothing left running."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from console.client.engine_thread import EngineThread
from console.embedded.launch import open_embedded


def engine_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "apc-engine"]


async def test_work_runs_on_the_engine_thread_and_its_errors_come_back() -> None:
    thread = EngineThread()
    try:

        async def where() -> tuple[int, asyncio.AbstractEventLoop]:
            return threading.get_ident(), asyncio.get_running_loop()

        ident, loop = await thread.run(where())
        assert ident != threading.get_ident() and loop is thread.loop
        assert loop is not asyncio.get_running_loop()

        async def fails() -> None:
            raise LookupError("no such run")

        with pytest.raises(LookupError, match="no such run"):
            await thread.run(fails())
    finally:
        await thread.stop()
    assert not thread.alive and thread.loop.is_closed()


async def test_cancelling_the_caller_cancels_the_engine_side_and_stop_cancels_what_is_left() -> None:
    thread = EngineThread()
    started, seen = threading.Event(), []

    async def slow() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    caller = asyncio.create_task(thread.run(slow()))
    await asyncio.to_thread(started.wait, 5)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    left = asyncio.run_coroutine_threadsafe(asyncio.sleep(60), thread.loop)
    await thread.stop()
    assert seen == ["cancelled"]
    assert left.cancelled()
    assert not thread.alive


async def test_the_embedded_session_runs_the_engine_on_its_own_thread(tmp_path: Path) -> None:
    session = await open_embedded(tmp_path / "data", port=0)
    try:
        assert engine_threads() == ["apc-engine"]
        listed = await session.client.list_processes()
        assert listed["ok"] and len(listed["data"]["items"]) == 7
        document = await session.client.process_document(listed["data"]["items"][0]["name"], 1)
        assert document is not None
    finally:
        assert session.close is not None
        await session.close()
    assert engine_threads() == []
