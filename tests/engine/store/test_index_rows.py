"""A write changes the index rows of its run by difference with the rows its run implied before (a
claim moves one ready step's row, a submit replaces it by the next step's): after any mix of writes
the tables hold exactly the rows a full rewrite from each run's state gives."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.core import DB_FILE, Engine
from engine.runtime.derive import derive
from engine.store.sqlite import SqliteStore
from engine.tools.context import machine_for
from tests.engine.engine_support import OPS, SCREENER, THREE_AGENTS, call, claim, ok, publish, start

TABLES = ("ready_agent_steps", "work_items", "overdue_steps", "timers")


def _rows(db: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall()) for table in TABLES}


async def test_index_rows_written_by_difference_equal_a_full_rewrite(engine: Engine, tmp_path: Path) -> None:
    store = engine.store
    assert isinstance(store, SqliteStore)
    await publish(engine, tmp_path, THREE_AGENTS)
    runs = [(await start(engine, "three-agents", {"ticket": f"T-{n}"}))["run"]["id"] for n in range(4)]
    one = await claim(engine, runs[0], "one")
    renewed = ok(await call(engine, SCREENER, "renew", token=one["token"], progress="half"), "renew")
    ok(
        await call(engine, SCREENER, "submit", token=renewed["token"], output={"note": "n"}, summary="s"),
        "submit",
    )
    await claim(engine, runs[0], "two")
    escalated = await claim(engine, runs[1], "one")
    ok(await call(engine, SCREENER, "escalate", token=escalated["token"], note="Portal down."), "escalate")
    await claim(engine, runs[2], "one")
    ok(await call(engine, OPS, "cancel", runId=runs[3], reason="Withdrawn."), "cancel")

    db = sqlite3.connect(tmp_path / "data" / DB_FILE)
    try:
        written = _rows(db)
        assert written["ready_agent_steps"] and written["work_items"] and written["timers"]
        async with store.transaction() as tx:
            for run_id in runs:
                run = await tx.get_run(run_id)
                assert run is not None
                machine = await machine_for(engine.ctx, run, engine.clock.now())
                await tx.save_run(run, derive(machine), None)  # None: every row of the run rewritten
        assert _rows(db) == written
    finally:
        db.close()


async def test_a_second_save_of_a_run_in_one_request_differs_from_what_the_first_wrote(
    engine: Engine, tmp_path: Path
) -> None:
    # `save` hands both saves the rows as the run was loaded; the store differs the second from the first's.
    store = engine.store
    assert isinstance(store, SqliteStore)
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    db = sqlite3.connect(tmp_path / "data" / DB_FILE)
    try:
        async with store.transaction() as tx:
            run = await tx.get_run(run_id)
            assert run is not None
            machine = await machine_for(engine.ctx, run, engine.clock.now())
            loaded = derive(machine)
            machine.claim("one", "a_screener", "digest-1", 600)
            await tx.save_run(run, derive(machine), loaded)
            machine.renew("one", "digest-2", 900, "half")
            await tx.save_run(run, derive(machine), loaded)
        written = _rows(db)
        [(*_, lease_end, _, _)] = written["ready_agent_steps"]
        assert [row[1:3] for row in written["timers"]] == [(lease_end, "lease")]
        async with store.transaction() as tx:
            run = await tx.get_run(run_id)
            assert run is not None
            machine = await machine_for(engine.ctx, run, engine.clock.now())
            await tx.save_run(run, derive(machine), None)  # None: every row of the run rewritten
        assert _rows(db) == written
    finally:
        db.close()
