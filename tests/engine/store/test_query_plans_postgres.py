"""PostgreSQL's own plan check (beside test_query_plans.py, SQLite's): every query the read tools make
can be served by an index, so none needs a sequential scan of a whole table.

The tables are tiny here, where a sequential scan is the planner's cheapest choice; with sequential
scans disabled it still picks one only when no index serves the query, and that is what fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.postgres import PostgresStore
from tests.engine.engine_support import MIRA, OPS, SCREENER, THREE_AGENTS, call, make_org, ok, publish, start
from tests.engine.tools.test_people import APPROVAL, BIND

SEQ_SCAN = re.compile(r"Seq Scan on (\w+)")


async def test_every_read_query_uses_an_index(
    tmp_path: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await Engine.open(tmp_path / "data", make_org(), clock=ManualClock(), database=pg_database)
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        await publish(engine, tmp_path, APPROVAL, BIND)
        run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
        await start(engine, "approval", {"owner": MIRA.id})
        seen: list[tuple[str, tuple[Any, ...]]] = []
        original_all, original_one = PostgresStore._all, PostgresStore._one

        async def spy_all(self: PostgresStore, sql: str, *args: Any) -> list[Any]:
            seen.append((sql, args))
            return await original_all(self, sql, *args)

        async def spy_one(self: PostgresStore, sql: str, *args: Any) -> Any:
            seen.append((sql, args))
            return await original_one(self, sql, *args)

        monkeypatch.setattr(PostgresStore, "_all", spy_all)
        monkeypatch.setattr(PostgresStore, "_one", spy_one)
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
    finally:
        await engine.close()
    assert len(seen) >= len(reads)
    plans: list[str] = []
    with psycopg.connect(pg_database, autocommit=True, cursor_factory=psycopg.ClientCursor) as conn:
        conn.execute("SET enable_seqscan = off")
        for sql, args in seen:
            plan = " | ".join(str(row[0]) for row in conn.execute(f"EXPLAIN {sql}", args))
            plans.append(plan)
            assert not SEQ_SCAN.search(plan), (sql, plan)
    assert any("ready_agent_order" in p or "ready_agent_process" in p for p in plans)
    assert any("run_inputs_eq" in p for p in plans)
    assert any("work_items_assignee" in p for p in plans)


def test_the_pattern_tells_a_sequential_scan_from_an_index_scan() -> None:
    assert SEQ_SCAN.search("Seq Scan on runs r  (cost=10000000000.00..10000000001.01 rows=1 width=32)")
    assert not SEQ_SCAN.search("Index Scan using runs_id_key on runs  (cost=0.15..8.17 rows=1 width=32)")
