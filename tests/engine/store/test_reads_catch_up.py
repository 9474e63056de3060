"""Every read shows the runs as of now (spec §3.4: every get_run returns a current snapshot).

Timers due by now (waits, wait_for timeouts, `due`, lease ends) are applied before `get_run`,
`get_work` and `list_runs` answer, as a tick would have applied them, so a snapshot read is one a
decision can use even on an embedded engine that never ticks. On a store opened read-only the same
view is computed in memory and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.sqlite import SqliteStore
from tests.engine.engine_support import (
    MIRA,
    SCREENER,
    call,
    decide,
    make_org,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores

FORK = """
---
name: fork
description: A review beside a pause; both must finish.
steps:
  - id: split
    parallel: [review, pause]
    next: done
  - id: review
    person: finance
    task: Review the request.
    next: join
  - id: pause
    wait: 30m
    next: join
  - id: done
    finish: done
---
"""

WAIT_THEN_WORK = """
---
name: wait-then-work
description: Wait half an hour, then an agent step that is due within the hour.
steps:
  - id: pause
    wait: 30m
  - id: work
    agent: Do the work.
    due: 1h
  - id: done
    finish: done
---
"""


async def test_a_snapshot_from_get_run_decides_after_a_timer_passed_without_a_tick(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, FORK, {"finance": "g_finance"})
    run_id = (await start(engine, "fork", {}))["run"]["id"]
    clock.advance(minutes=31)

    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view)["pause"] == "done"
    assert view["data"]["steps"]["pause"] == {"by": "server", "at": "2026-10-06T09:30:00Z", "history": []}
    [item] = view["workItems"]
    decided = await decide(engine, MIRA, run_id, item, "completed", output={})
    assert ok(decided, "decide")["run"]["outcome"] == "done"


async def test_get_work_and_list_runs_show_what_a_timer_made_ready_or_ended(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, WAIT_THEN_WORK)
    run_id = (await start(engine, "wait-then-work", {}))["run"]["id"]
    clock.advance(minutes=31)

    work = ok(await call(engine, SCREENER, "get_work"), "get_work")
    assert [(i["runId"], i["stepId"], i["readySince"], i["overdue"]) for i in work["items"]] == [
        (run_id, "work", "2026-10-06T09:30:00Z", False)
    ]
    runs = ok(await call(engine, MIRA, "list_runs", state="active"), "list_runs")
    assert [(r["id"], r["updatedAt"]) for r in runs["items"]] == [(run_id, "2026-10-06T09:30:00Z")]

    clock.advance(hours=2)
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert [s.get("overdue") for s in view["steps"]] == [None, True, None]
    assert [(n.step_id, n.kind, n.at) for n in await engine.notifications(run_id)] == [
        ("work", "overdue", "2026-10-06T10:30:00Z")
    ]


async def test_a_read_only_store_shows_the_caught_up_view_and_writes_nothing(tmp_path: Path) -> None:
    clock = ManualClock()
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        await publish(engine, tmp_path, WAIT_THEN_WORK)
        run_id = (await start(engine, "wait-then-work", {}))["run"]["id"]
    finally:
        await engine.close()
    before = {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()}

    clock.advance(minutes=31)
    store = await SqliteStore.open(data / "engine.db", read_only=True)
    reader = Engine(store, make_org(), clock, engine.files)
    try:
        assert store.read_only is True
        view = ok(await call(reader, MIRA, "get_run", runId=run_id), "get_run")
        assert step_states(view) == {"pause": "done", "work": "ready", "done": None}
        assert view["run"]["updatedAt"] == "2026-10-06T09:30:00Z"
        runs = ok(await call(reader, MIRA, "list_runs"), "list_runs")
        assert [(r["id"], r["state"], r["updatedAt"]) for r in runs["items"]] == [
            (run_id, "active", "2026-10-06T09:30:00Z")
        ]
        await reader.tick()
    finally:
        await reader.close()
    after = {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()}
    assert {name: after[name] for name in before} == before
    # SQLite's own coordination files for a WAL database may appear beside it; no write went into them.
    assert set(after) - set(before) <= {"engine.db-shm", "engine.db-wal"}
    assert after.get("engine.db-wal", b"") == b""
