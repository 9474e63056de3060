"""The server time mark is recorded ahead of the time a write issued, and only when that time passed it:
most writes leave its row alone (a page less to commit), and a restart still never goes back in time."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.base import Transaction
from engine.store.sqlite import SqliteStore
from engine.store.state import MARK_AHEAD, clock_mark, parse_stamp, stamp
from tests.engine.engine_support import THREE_AGENTS, make_org, publish, start

pytestmark = pytest.mark.both_stores


async def test_the_mark_moves_only_when_a_write_passes_it(engine: Engine, clock: ManualClock) -> None:
    t0 = stamp(clock.now())
    marks = []
    for step in (0, 0.5, 0.5, 0.5, 3.0, -10.0):
        at = stamp(clock.advance(step))

        async def record(tx: Transaction, at: str = at) -> None:
            await tx.advance_clock(at)

        await engine.store.write(record)
        marks.append(await engine.store.server_time())
    first = clock_mark(t0)
    later = clock_mark(stamp(parse_stamp(t0) + timedelta(seconds=1.5)))
    last = clock_mark(stamp(parse_stamp(t0) + timedelta(seconds=4.5)))
    assert marks == [first, first, first, later, last, last]


async def test_a_mark_a_failed_request_wrote_is_not_taken_as_recorded(store: SqliteStore) -> None:
    """The writer skips the mark's row when it knows the database holds a later mark: a mark whose
    request was rolled back is not one it holds."""
    t0 = parse_stamp("2026-10-06T09:00:00.000000Z")

    def at(seconds: float) -> str:
        return stamp(t0 + timedelta(seconds=seconds))

    async def record(tx: Transaction, when: str) -> None:
        await tx.advance_clock(when)

    async def fail(tx: Transaction) -> None:
        await tx.advance_clock(at(2))
        raise RuntimeError("refused")

    await store.write(lambda tx: record(tx, at(0)))
    with pytest.raises(RuntimeError, match="refused"):
        await store.write(fail)
    assert await store.server_time() == clock_mark(at(0))
    await store.write(lambda tx: record(tx, at(2.5)))
    assert await store.server_time() == clock_mark(at(2.5))
    await store.write(lambda tx: record(tx, at(3)))
    assert await store.server_time() == clock_mark(at(2.5))


def test_the_mark_is_ahead_of_the_time_issued() -> None:
    assert clock_mark("2026-10-06T09:00:00.250000Z") == "2026-10-06T09:00:01.250000Z"
    assert timedelta(seconds=1) == MARK_AHEAD


async def test_a_crash_copy_never_resumes_before_an_acknowledged_write(tmp_path: Path) -> None:
    """After every acknowledged write the database files as they are (a power cut then) hold a mark at
    or after that write's time."""
    clock = ManualClock()
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=clock)
    seen = []
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        for n in range(8):
            clock.advance(0.4)
            acknowledged = stamp(clock.now())
            await start(engine, "three-agents", {"ticket": f"T-{n}"})
            copy = tmp_path / f"crash-{n}"
            copy.mkdir()
            for name in ("engine.db", "engine.db-wal"):
                shutil.copy(data / name, copy / name)
            store = await SqliteStore.open(copy / "engine.db")
            try:
                mark = await store.server_time()
            finally:
                await store.close()
            assert mark is not None and mark >= acknowledged, (n, mark, acknowledged)
            seen.append(mark)
    finally:
        await engine.close()
    # Eight writes 0.4 s apart moved the mark three times, each time a second past the write's time.
    assert len(set(seen)) == 3
