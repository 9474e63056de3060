"""No read scans a whole table: every query get_work, list_runs and get_run make is served by an index."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine.core import Engine
from engine.store.sqlite import SqliteStore
from tests.engine.engine_support import MIRA, OPS, SCREENER, THREE_AGENTS, call, ok, publish, start
from tests.engine.tools.test_people import APPROVAL, BIND

FULL_SCAN = re.compile(
    r"\bSCAN (?!CONSTANT)(\w+)(?! USING (?:INTEGER PRIMARY KEY|(?:COVERING )?INDEX \w+ \())"
)


async def test_every_read_query_searches_an_index(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    await publish(engine, tmp_path, APPROVAL, BIND)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    await start(engine, "approval", {"owner": MIRA.id})
    seen: list[tuple[str, tuple[Any, ...]]] = []
    original_all, original_one = SqliteStore._all, SqliteStore._one

    async def spy_all(self: SqliteStore, sql: str, *args: Any) -> list[Any]:
        seen.append((sql, args))
        return await original_all(self, sql, *args)

    async def spy_one(self: SqliteStore, sql: str, *args: Any) -> Any:
        seen.append((sql, args))
        return await original_one(self, sql, *args)

    monkeypatch.setattr(SqliteStore, "_all", spy_all)
    monkeypatch.setattr(SqliteStore, "_one", spy_one)
    reads = [
        (SCREENER, "get_work", {}),
        (SCREENER, "get_work", {"process": "three-agents"}),
        (MIRA, "get_work", {}),
        (OPS, "get_work", {"process": "approval"}),
        (MIRA, "get_run", {"runId": run_id}),
        (MIRA, "list_runs", {}),
        (MIRA, "list_runs", {"process": "approval"}),
        (MIRA, "list_runs", {"state": "waiting"}),
        (MIRA, "list_runs", {"process": "approval", "state": "waiting"}),
        (MIRA, "list_runs", {"inputs": {"ticket": "A"}, "state": "active"}),
        (MIRA, "list_runs", {"inputs": {"ticket": "A", "other": 1}}),
    ]
    for who, tool, arguments in reads:
        ok(await call(engine, who, tool, **arguments), tool)
    assert len(seen) >= len(reads)
    plans: list[str] = []
    db = sqlite3.connect(tmp_path / "data" / "engine.db")
    try:
        for sql, args in seen:
            plan = " | ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", args))
            plans.append(plan)
            assert not FULL_SCAN.search(plan), (sql, plan)
    finally:
        db.close()
    assert any("INDEX ready_agent_order" in p for p in plans)
    assert any("USING COVERING INDEX run_inputs_eq" in p for p in plans)
    assert any("USING INDEX work_items_assignee" in p for p in plans)


def test_the_scan_pattern_tells_a_scan_from_a_search() -> None:
    assert FULL_SCAN.search("SCAN r")
    assert FULL_SCAN.search("SCAN r USING INDEX runs_state")
    assert not FULL_SCAN.search("SEARCH r USING INTEGER PRIMARY KEY (rowid<?)")
    assert not FULL_SCAN.search("SEARCH w USING INDEX work_items_assignee (assignee_kind=? AND assignee=?)")
