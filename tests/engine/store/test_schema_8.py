"""Schema 8 (SQLite): a run's log entries and step data keyed by the run's seq, not its id, so the rows
of the runs under way go to the right edge of their B-trees; a store from schema 7 keeps every row and
goes on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.migrations import SCHEMA_VERSION
from tests.engine.engine_support import SCREENER, THREE_AGENTS, call, claim, ok, publish, start
from tests.engine.store.old_schema import as_schema
from tests.support.org import make_org

BY_RUN_ID = {
    "run_log": "SELECT r.id, l.slot, l.seq, l.at, l.kind, l.by, l.step_id, l.note, l.count, l.detail "
    "FROM run_log l JOIN runs r ON r.{key} = l.{column}",
    "run_steps": "SELECT r.id, s.step_id, s.pos, s.data FROM run_steps s JOIN runs r ON r.{key} = s.{column}",
}


def _rows(db: sqlite3.Connection, key: str, column: str) -> dict[str, list[tuple[object, ...]]]:
    """Both tables' rows with their run's id, joined on `runs.key = table.column`."""
    return {
        table: sorted(db.execute(sql.format(key=key, column=column)).fetchall())
        for table, sql in BY_RUN_ID.items()
    }


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


async def test_a_store_from_schema_7_keeps_its_run_logs_and_step_data(tmp_path: Path) -> None:
    data, clock = tmp_path / "data", ManualClock()
    replies: dict[str, object] = {}
    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        runs = [(await start(engine, "three-agents", {"ticket": f"T-{n}"}))["run"]["id"] for n in range(3)]
        submits = {}
        for run_id in runs[:2]:
            token = (await claim(engine, run_id, "one"))["token"]
            submits[run_id] = {
                "token": token,
                "output": {"note": run_id},
                "summary": "s",
                "requestId": run_id,
            }
            replies[run_id] = ok(await call(engine, SCREENER, "submit", **submits[run_id]), "submit")
        token = (await claim(engine, runs[2], "one"))["token"]
        log = {run_id: await engine.store.run_log(run_id, 0, 100) for run_id in runs}
        before_runs = {run_id: await engine.store.get_run(run_id) for run_id in runs}
    finally:
        await engine.close()
    db_file = data / "engine.db"
    db = sqlite3.connect(db_file)
    try:
        before = _rows(db, "seq", "run_seq")
    finally:
        db.close()
    assert [len(rows) for rows in before.values()] == [sum(len(entries) for entries in log.values()), 2]
    as_schema(db_file, 7)
    db = sqlite3.connect(db_file)
    try:
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (7,)
        assert [_columns(db, t)[0] for t in BY_RUN_ID] == ["run_id", "run_id"]
        assert _rows(db, "id", "run_id") == before
    finally:
        db.close()

    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        db = sqlite3.connect(db_file)
        try:
            assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
            assert [_columns(db, t)[0] for t in BY_RUN_ID] == ["run_seq", "run_seq"]
            assert _rows(db, "seq", "run_seq") == before
        finally:
            db.close()
        assert {run_id: await engine.store.run_log(run_id, 0, 100) for run_id in runs} == log
        assert {run_id: await engine.store.get_run(run_id) for run_id in runs} == before_runs
        for run_id, submitted in submits.items():  # a replay answers from the recorded result
            assert ok(await call(engine, SCREENER, "submit", **submitted), "submit") == replies[run_id]
        done = await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s")
        assert ok(done, "submit")["data"]["steps"]["one"]["output"] == {"note": "n"}
        after = await engine.store.run_log(runs[2], 0, 100)
        assert after[: len(log[runs[2]])] == log[runs[2]]
        assert [e.kind for e in after[len(log[runs[2]]) :]][:1] == ["submitted"]
        run = await engine.store.get_run(runs[2])
        assert run is not None and list(run.data) == ["one"]
    finally:
        await engine.close()
