"""DESIGN principle 3: a write acknowledged before a SIGKILL is on disk after it, and runs stay consistent
(on SQLite and on PostgreSQL).

A child process drives the engine and prints one line per acknowledged write; the parent kills it
mid-stream, reopens the store and checks every acknowledged write and every derived index. With
several concurrent writers the child's SQLite writes are group-committed (it reports its commits and
requests, so the test knows batches really formed).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.runtime.derive import derive
from engine.tools.context import machine_for
from tests.engine.engine_support import MIRA, call, make_org, ok

pytestmark = pytest.mark.both_stores

REPO = Path(__file__).resolve().parents[3]

CHILD = """
import asyncio, sys, textwrap
from pathlib import Path
sys.path.insert(0, {tests!r})
from tests.engine.engine_support import SCREENER, THREE_AGENTS, make_org
from engine.clock import ManualClock
from engine.core import Engine

async def main():
    engine = await Engine.open(Path({data!r}), make_org(), clock=ManualClock(), database={database!r})
    folder = Path({data!r}) / "three-agents"
    folder.mkdir(exist_ok=True)
    (folder / "PROCESS.md").write_text(textwrap.dedent(THREE_AGENTS).lstrip())
    assert (await engine.publish(folder, {{}})).ok
    await asyncio.gather(*(worker(engine, w) for w in range({workers})))

async def worker(engine, w):
    n = 0
    while True:
        n += 1
        key = f"{{w}}-{{n}}"
        reply = await engine.call(SCREENER, "start_run", {{"process": "three-agents", "inputs": {{"ticket": key}}, "requestId": f"s{{key}}"}})
        run_id = reply["data"]["run"]["id"]
        print("started", run_id, flush=True)
        for step in ("one", "two"):
            c = await engine.call(SCREENER, "claim", {{"runId": run_id, "stepId": step, "requestId": f"c{{key}}{{step}}"}})
            s = await engine.call(SCREENER, "submit", {{"token": c["data"]["token"], "output": {{"note": step}},
                                                       "summary": "s", "requestId": f"u{{key}}{{step}}"}})
            assert s["ok"], s
            print("done", run_id, step, flush=True)
            stats = getattr(engine.store, "writer_stats", None)
            if stats is not None:
                print("stats", stats.commits, stats.requests, flush=True)

asyncio.run(main())
"""


@pytest.mark.parametrize("workers", [1, 8])
async def test_acknowledged_writes_survive_sigkill(
    tmp_path: Path, store_kind: str, request: pytest.FixtureRequest, workers: int
) -> None:
    database = request.getfixturevalue("pg_database") if store_kind == "postgresql" else None
    data = tmp_path / "data"
    data.mkdir()
    script = CHILD.format(
        tests=str(Path(__file__).parent), data=str(data), database=database, workers=workers
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    acknowledged: list[list[str]] = []
    batched = 0
    try:
        assert child.stdout is not None
        while len(acknowledged) < 60:
            line = child.stdout.readline()
            assert line, "the child stopped early"
            if line.startswith("stats"):
                commits, requests = map(int, line.split()[1:])
                batched = max(batched, requests - commits)
            else:
                acknowledged.append(line.split())
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    if database is None:  # several writers: some commits held several requests
        assert (batched > 0) == (workers > 1)

    engine = await Engine.open(data, make_org(), clock=ManualClock(), database=database)
    try:
        for ack in acknowledged:
            view = ok(await call(engine, MIRA, "get_run", runId=ack[1]), "get_run")
            if ack[0] == "done":
                assert view["data"]["steps"][ack[2]]["output"] == {"note": ack[2]}
        runs = ok(await call(engine, MIRA, "list_runs", limit=100), "list_runs")["items"]
        assert len(runs) >= len({a[1] for a in acknowledged})
        db = _connect(data, database)
        try:
            for item in runs:
                run = await engine.store.get_run(item["id"])
                assert run is not None
                machine = await machine_for(engine.ctx, run, engine.clock.now())
                rows = derive(machine)
                stored = db.execute(
                    "SELECT step_id, available_at, step_index FROM ready_agent_steps WHERE run_id = "
                    + ("?" if database is None else "%s"),
                    (run.id,),
                ).fetchall()
                assert sorted(tuple(row) for row in stored) == sorted(rows.agent_steps)
                ready = [sid for sid, st in run.steps.items() if st.state in ("ready", "claimed")]
                assert len(ready) == 1 and run.state == "active"
        finally:
            db.close()
    finally:
        await engine.close()


def _connect(data: Path, database: str | None) -> Any:
    """The store's database as a plain DB-API connection, to read its index rows directly."""
    return sqlite3.connect(data / "engine.db") if database is None else psycopg.connect(database)
