"""Server time never goes backwards for one data folder (issue: with --speed N the clock restarted
from wall time on every launch, so a run could end before it started and history went out of order).

At speed 1 server time is wall time; at speed N a restart resumes from the last server time the store
recorded, whatever speed the new start uses, and time does not run while the server is down.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engine.clock import ManualClock, ServerClock
from engine.core import Engine
from engine.store.sqlite import SqliteStore
from engine.store.state import parse_stamp
from tests.engine.engine_support import MIRA, THREE_AGENTS, call, make_org, ok, publish, start

T0 = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


class Fake:
    """A wall clock and a monotonic clock the test moves by hand."""

    def __init__(self, wall: datetime = T0) -> None:
        self.wall_time = wall
        self.mono = 1000.0

    def wall(self) -> datetime:
        return self.wall_time

    def monotonic(self) -> float:
        return self.mono

    def sleep(self, seconds: float) -> None:
        self.mono += seconds
        self.wall_time += timedelta(seconds=seconds)


def clock(fake: Fake, speed: float, resume: datetime | None = None) -> ServerClock:
    return ServerClock(speed, resume, wall=fake.wall, monotonic=fake.monotonic)


def test_at_speed_one_server_time_is_wall_time() -> None:
    fake = Fake()
    c = clock(fake, 1, resume=T0 - timedelta(days=3))
    assert c.now() == T0
    fake.sleep(90)
    assert c.now() == T0 + timedelta(seconds=90)


def test_at_speed_n_a_restart_resumes_from_the_mark_not_from_wall_time() -> None:
    fake = Fake()
    first = clock(fake, 60)
    fake.sleep(60)
    mark = first.now()
    assert mark == T0 + timedelta(hours=1)
    fake.sleep(600)
    second = clock(fake, 60, resume=mark)
    assert second.now() == mark
    fake.sleep(1)
    assert second.now() == mark + timedelta(minutes=1)


def test_a_folder_that_ran_ahead_resumes_from_its_mark_at_speed_one_until_wall_time_catches_up() -> None:
    fake = Fake()
    ahead = T0 + timedelta(minutes=10)
    c = clock(fake, 1, resume=ahead)
    assert c.now() == ahead
    fake.sleep(60)
    assert c.now() == ahead + timedelta(seconds=60)


def test_the_wall_clock_stepping_back_does_not_move_server_time_back() -> None:
    fake = Fake()
    c = clock(fake, 1)
    fake.sleep(10)
    seen = c.now()
    fake.wall_time -= timedelta(hours=1)
    assert c.now() == seen
    fake.mono += 5
    assert c.now() == seen + timedelta(seconds=5)


def test_speed_must_be_positive_and_the_mark_aware() -> None:
    with pytest.raises(ValueError, match="speed"):
        ServerClock(0)
    with pytest.raises(ValueError, match="timezone"):
        ServerClock(2, datetime(2026, 1, 1))


async def test_a_sped_up_restart_continues_after_everything_the_folder_recorded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ahead = datetime.now(UTC) + timedelta(days=1)
    engine = await Engine.open(data, make_org(), clock=ManualClock(ahead))
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        first = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    finally:
        await engine.close()

    engine = await Engine.open(data, make_org(), speed=60)
    try:
        assert isinstance(engine.clock, ServerClock)
        assert engine.clock.now() >= ahead
        second = (await start(engine, "three-agents", {"ticket": "T-2"}))["run"]["id"]
        runs = {r["id"]: r for r in ok(await call(engine, MIRA, "list_runs"), "list_runs")["items"]}
        assert runs[second]["startedAt"] >= runs[first]["updatedAt"]
    finally:
        await engine.close()
    mark = await _mark(data)
    assert mark >= ahead


async def test_server_time_does_not_run_while_the_server_is_down(tmp_path: Path) -> None:
    """A wait due an hour after the last recorded time has not fired when a sped-up server restarts
    a day later in wall time; at speed 1 it has."""
    data = tmp_path / "data"
    earlier = datetime.now(UTC) - timedelta(days=1)
    engine = await Engine.open(data, make_org(), clock=ManualClock(earlier))
    try:
        await publish(
            engine,
            tmp_path,
            """
            ---
            name: pause
            description: Wait an hour.
            steps:
              - id: hold
                wait: 1h
              - id: done
                finish: done
            ---
            """,
        )
        run_id = (await start(engine, "pause", {}))["run"]["id"]
    finally:
        await engine.close()

    for speed, state in ((60, "waiting"), (1, "ended")):
        engine = await Engine.open(data, make_org(), speed=speed)
        try:
            view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
            assert view["run"]["state"] == state
        finally:
            await engine.close()


async def _mark(data: Path) -> datetime:
    store = await SqliteStore.open(data / "engine.db")
    try:
        mark = await store.server_time()
    finally:
        await store.close()
    assert mark is not None
    return parse_stamp(mark)
