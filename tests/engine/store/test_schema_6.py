"""Schema 6 (SQLite): tokens, ready agent steps and timers keyed by their primary key alone (WITHOUT
ROWID), so a claim writes one page less for each; a store from before keeps every row and goes on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.migrations import MIGRATIONS
from tests.engine.engine_support import (
    SCREENER,
    THREE_AGENTS,
    call,
    claim_as_before,
    make_org,
    ok,
    publish,
    start,
)
from tests.engine.store.old_schema import as_schema

TABLES = ("tokens", "ready_agent_steps", "timers")


def _rows(db: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall()) for table in TABLES}


async def test_a_store_from_before_schema_6_keeps_its_tokens_work_and_timers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
        token = await claim_as_before(engine, run_id, "one")
        await start(engine, "three-agents", {"ticket": "T-2"})
    finally:
        await engine.close()
    db = sqlite3.connect(data / "engine.db")
    try:
        before = _rows(db)
    finally:
        db.close()
    assert all(before.values())
    as_schema(data / "engine.db", 5)
    db = sqlite3.connect(data / "engine.db")
    try:
        assert not [t for t in TABLES if "WITHOUT ROWID" in _definition(db, t)]
        assert _rows(db) == before
    finally:
        db.close()
    await (await Engine.open(data, make_org(), clock=ManualClock())).close()
    db = sqlite3.connect(data / "engine.db")
    try:
        assert [t for t in TABLES if "WITHOUT ROWID" in _definition(db, t)] == list(TABLES)
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (MIGRATIONS[-1].version,)
        assert _rows(db) == before
    finally:
        db.close()
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        done = await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s")
        assert ok(done, "submit")["data"]["steps"]["one"]["output"] == {"note": "n"}
    finally:
        await engine.close()


def _definition(db: sqlite3.Connection, table: str) -> str:
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return str(row[0])
