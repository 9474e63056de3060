"""Schema 7 (SQLite): work items keyed by run and id, overdue steps by their primary key, both WITHOUT
ROWID (an item opened or closed writes one page, not three); a store from before keeps every row and
goes on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.migrations import MIGRATIONS
from tests.engine.engine_support import MIRA, OPS, call, decide, make_org, ok, publish, start

TABLES = ("work_items", "overdue_steps")
SIGN_OFF = """
---
name: sign-off
description: A person signs off within the hour.
inputs:
  owner: { type: person }
steps:
  - id: sign
    person: inputs.owner
    approve: Sign off.
    due: 1h
  - id: done
    finish: signed
---
"""


def _rows(db: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall()) for table in TABLES}


async def test_a_store_from_before_schema_7_keeps_its_work_items_and_overdue_steps(tmp_path: Path) -> None:
    data, clock = tmp_path / "data", ManualClock()
    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        await publish(engine, tmp_path, SIGN_OFF)
        run_ids = [(await start(engine, "sign-off", {"owner": MIRA.id}))["run"]["id"] for _ in range(2)]
        clock.advance(hours=2)
        await engine.tick()
    finally:
        await engine.close()
    db = sqlite3.connect(data / "engine.db", isolation_level=None)
    try:  # the two tables as schema 1 made them, with the same rows
        before = _rows(db)
        assert [len(rows) for rows in before.values()] == [2, 2]
        script = ["BEGIN"]
        for table in TABLES:
            script += [f"CREATE TABLE old_{table} AS SELECT * FROM {table}", f"DROP TABLE {table}"]
        script += [
            s
            for migration in MIGRATIONS[:2]
            for s in migration.statements("sqlite")
            if s.startswith("CREATE") and any(f" {t} " in s for t in TABLES)
        ]
        script += [f"INSERT INTO {table} SELECT * FROM old_{table}" for table in TABLES]
        script += [f"DROP TABLE old_{table}" for table in TABLES]
        script += ["DELETE FROM schema_version WHERE version >= 7", "COMMIT"]
        for statement in script:
            db.execute(statement)
        assert _indexes(db) == ["work_items_assignee", "work_items_run"]
        assert not [t for t in TABLES if "WITHOUT ROWID" in _definition(db, t)]
    finally:
        db.close()
    await (await Engine.open(data, make_org(), clock=clock)).close()
    db = sqlite3.connect(data / "engine.db")
    try:
        assert [t for t in TABLES if "WITHOUT ROWID" in _definition(db, t)] == list(TABLES)
        assert _indexes(db) == ["work_items_assignee"]
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (MIGRATIONS[-1].version,)
        assert _rows(db) == before
    finally:
        db.close()
    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        work = ok(await call(engine, MIRA, "get_work"), "get_work")["items"]
        assert sorted(item["runId"] for item in work) == sorted(run_ids)
        view = ok(await call(engine, MIRA, "get_run", runId=run_ids[0]), "get_run")
        [item] = view["workItems"]
        ok(await decide(engine, MIRA, run_ids[0], item, "approved"), "decide")
        assert (await engine.store.counts()).open_work_items == 1
        assert (await engine.store.counts()).overdue_steps == 1
        ok(await call(engine, OPS, "cancel", runId=run_ids[1], reason="Withdrawn."), "cancel")
        assert (await engine.store.counts()).open_work_items == 0
        assert (await engine.store.counts()).overdue_steps == 0
    finally:
        await engine.close()


def _definition(db: sqlite3.Connection, table: str) -> str:
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return str(row[0])


def _indexes(db: sqlite3.Connection) -> list[str]:
    rows = db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('work_items', 'overdue_steps') "
        "AND sql IS NOT NULL ORDER BY name"
    )
    return [row[0] for row in rows]
