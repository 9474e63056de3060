"""Schema 7 (SQLite): work items, overdue steps, ready agent steps and timers keyed by what finds them,
WITHOUT ROWID, with fewer indexes (a claim writes one page for its ready step, not three); a store from
schema 6 keeps every row and goes on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.migrations import SCHEMA_VERSION
from tests.engine.engine_support import THREE_AGENTS, call, claim, decide, ok, publish, start
from tests.engine.store.old_schema import as_schema
from tests.support.org import MIRA, OPS, SCREENER, make_org

TABLES = ("work_items", "overdue_steps", "ready_agent_steps", "timers")
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


async def test_a_store_from_schema_6_keeps_its_work_timers_and_ready_steps(tmp_path: Path) -> None:
    data, clock = tmp_path / "data", ManualClock()
    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        await publish(engine, tmp_path, SIGN_OFF)
        await publish(engine, tmp_path, THREE_AGENTS)
        signs = [(await start(engine, "sign-off", {"owner": MIRA.id}))["run"]["id"] for _ in range(2)]
        clock.advance(hours=2)
        await engine.tick()
        agents = [(await start(engine, "three-agents", {"ticket": f"T-{n}"}))["run"]["id"] for n in range(2)]
        token = (await claim(engine, agents[0], "one"))["token"]
    finally:
        await engine.close()
    db_file = data / "engine.db"
    db = sqlite3.connect(db_file)
    try:
        before = _rows(db)
    finally:
        db.close()
    assert [len(rows) for rows in before.values()] == [2, 2, 2, 1]
    as_schema(db_file, 6)
    db = sqlite3.connect(db_file)
    try:
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (6,)
        assert _indexes(db) == [
            "ready_agent_order",
            "ready_agent_process",
            "timers_at",
            "work_items_assignee",
            "work_items_run",
        ]
        assert _rows(db) == before
    finally:
        db.close()

    await (await Engine.open(data, make_org(), clock=clock)).close()
    db = sqlite3.connect(db_file)
    try:
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        assert [t for t in TABLES if "WITHOUT ROWID" in _definition(db, t)] == list(TABLES)
        assert _indexes(db) == ["ready_agent_order", "work_items_assignee"]
        assert _rows(db) == before
    finally:
        db.close()

    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        work = ok(await call(engine, MIRA, "get_work"), "get_work")["items"]
        assert sorted(item["runId"] for item in work) == sorted(signs)
        [item] = ok(await call(engine, MIRA, "get_run", runId=signs[0]), "get_run")["workItems"]
        ok(await decide(engine, MIRA, signs[0], item, "approved"), "decide")
        ok(await call(engine, OPS, "cancel", runId=signs[1], reason="Withdrawn."), "cancel")
        ok(await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "submit")
        ready = ok(await call(engine, SCREENER, "get_work"), "get_work")["items"]
        assert sorted((i["runId"], i["stepId"]) for i in ready) == sorted(
            [(agents[0], "two"), (agents[1], "one")]
        )
    finally:
        await engine.close()
    db = sqlite3.connect(db_file)
    try:
        after = _rows(db)
    finally:
        db.close()
    assert after["work_items"] == after["overdue_steps"] == after["timers"] == []
    assert [(row[0], row[1]) for row in after["ready_agent_steps"]] == sorted(
        [(agents[0], "two"), (agents[1], "one")]
    )


def _definition(db: sqlite3.Connection, table: str) -> str:
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return str(row[0])


def _indexes(db: sqlite3.Connection) -> list[str]:
    marks = ", ".join("?" * len(TABLES))
    rows = db.execute(
        f"SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ({marks}) "
        "AND sql IS NOT NULL ORDER BY name",
        TABLES,
    )
    return [row[0] for row in rows]
