"""Engine throughput: N runs of a 3-step agent process driven through `engine.call`, beside the
commits/s of a bare aiosqlite insert-and-commit loop with the same durability settings, in the same run.

Each run is 1 start_run + 3 x (claim, submit) = 7 write transactions and 7 step transitions
(3 claims, 3 completions, 1 finish). The ratio says how much of the disk's commit rate the engine keeps. The run log's cost: the same
runs again with its insert left out (`append_log` a no-op), beside the runs with it.

With `--store postgresql` the same runs go through engines on one PostgreSQL database
(`--database URL`, default $APC_TEST_DATABASE_URL or the local test database; a fresh schema, dropped
after): 1 server, then 3 server processes at once (each driving its share of the runs, `--workers`
at a time), beside the bare single-row insert+commit rate of that database in the same run, and the
3/1 ratio. On a small machine shared with the database this is a report, not a gate.

    .venv/bin/python bench/engine_throughput.py [--runs N] [--store sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from psycopg import sql

from engine.clock import SystemClock
from engine.core import Engine
from engine.identity import agent
from engine.org import OrgConfig
from engine.store.sqlite import connect
from engine.store.sqlite_tx import SqliteTransaction

PROCESS = """
---
name: three-steps
description: Three agent steps.
steps:
  - id: one
    agent: First.
    output: { note: string }
  - id: two
    agent: Second.
    output: { note: string }
  - id: three
    agent: Third.
    output: { note: string }
  - id: done
    finish: finished
---
"""
STEPS = ("one", "two", "three")
WRITES_PER_RUN = 1 + 2 * len(STEPS)
TRANSITIONS_PER_RUN = 2 * len(STEPS) + 1


async def engine_rate(
    root: Path,
    runs: int,
    data: str = "engine",
    *,
    database: str | None = None,
    workers: int = 1,
    tag: str = "",
) -> tuple[float, float]:
    folder = root / "three-steps"
    folder.mkdir(exist_ok=True)
    (folder / "PROCESS.md").write_text(textwrap.dedent(PROCESS).lstrip())
    org = OrgConfig.build(agents={"a_bench": "bench-token-1"})
    engine = await Engine.open(root / data, org, clock=SystemClock(), database=database)
    try:
        assert (await engine.publish(folder, {})).ok
        started = time.perf_counter()
        await asyncio.gather(*(_drive(engine, range(w, runs, workers), tag) for w in range(workers)))
        elapsed = time.perf_counter() - started
    finally:
        await engine.close()
    return runs / elapsed, runs * TRANSITIONS_PER_RUN / elapsed


async def _drive(engine: Engine, numbers: range, tag: str) -> None:
    who = agent("a_bench")
    for n in numbers:
        reply = await engine.call(
            who, "start_run", {"process": "three-steps", "inputs": {}, "requestId": f"{tag}s{n}"}
        )
        run_id = reply["data"]["run"]["id"]
        for step in STEPS:
            claim = await engine.call(
                who, "claim", {"runId": run_id, "stepId": step, "requestId": f"{tag}c{n}{step}"}
            )
            done = await engine.call(
                who,
                "submit",
                {
                    "token": claim["data"]["token"],
                    "output": {"note": step},
                    "summary": "s",
                    "requestId": f"{tag}u{n}{step}",
                },
            )
            if not done["ok"]:
                raise RuntimeError(done)


async def without_run_log(root: Path, runs: int, data: str) -> float:
    """runs/s of the same runs with the run log's insert left out."""
    original = SqliteTransaction.append_log

    async def skip(self: SqliteTransaction, run_id: str, entries: object) -> None:
        return None

    SqliteTransaction.append_log = skip  # type: ignore[method-assign]
    try:
        return (await engine_rate(root, runs, data))[0]
    finally:
        SqliteTransaction.append_log = original  # type: ignore[method-assign]


async def baseline_rate(root: Path, commits: int) -> float:
    conn = await connect(root / "baseline.db")
    try:
        await conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)")
        started = time.perf_counter()
        for n in range(commits):
            await conn.execute("BEGIN IMMEDIATE")
            await conn.execute("INSERT INTO t (doc) VALUES (?)", (f"row {n}",))
            await conn.execute("COMMIT")
        elapsed = time.perf_counter() - started
    finally:
        await conn.close()
    return commits / elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--database", default=os.environ.get("APC_TEST_DATABASE_URL") or DEFAULT_DATABASE)
    parser.add_argument("--workers", type=int, default=4, help="postgresql: runs in flight per server")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child is not None:
        await _child(options)
        return
    if options.store == "postgresql":
        await postgres_main(options)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        commits = await baseline_rate(root, options.runs * WRITES_PER_RUN)
        # With and without the run log in turn, twice, the better of each: the order or a noisy
        # neighbour does not decide the comparison.
        unlogged_runs_per_s = await without_run_log(root, options.runs, "unlogged-1")
        runs_per_s, transitions_per_s = await engine_rate(root, options.runs, "engine-1")
        unlogged_runs_per_s = max(
            unlogged_runs_per_s, await without_run_log(root, options.runs, "unlogged-2")
        )
        again = await engine_rate(root, options.runs, "engine-2")
        runs_per_s, transitions_per_s = max((runs_per_s, transitions_per_s), again)
    writes_per_s = runs_per_s * WRITES_PER_RUN
    unlogged_writes_per_s = unlogged_runs_per_s * WRITES_PER_RUN
    print(f"engine: {options.runs} runs of a 3-step agent process through engine.call")
    print(f"  runs/s               {runs_per_s:10.1f}")
    print(f"  step transitions/s   {transitions_per_s:10.1f}")
    print(f"  write calls/s        {writes_per_s:10.1f}")
    print(f"baseline: bare aiosqlite insert+commit (WAL, synchronous=FULL): {commits:10.1f} commits/s")
    print(f"ratio: engine write calls / baseline commits = {writes_per_s / commits:.2f}")
    print(f"write calls with run log: {writes_per_s:.1f} calls/s")
    print(f"write calls without run log: {unlogged_writes_per_s:.1f} calls/s")
    print(f"ratio write calls with run log / without: {writes_per_s / unlogged_writes_per_s:.2f}")


DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/test"


async def _child(options: argparse.Namespace) -> None:
    """One server of the PostgreSQL bench: drive its runs, print the seconds they took."""
    with tempfile.TemporaryDirectory() as tmp:
        runs_per_s, _ = await engine_rate(
            Path(tmp), options.runs, database=options.database, workers=options.workers, tag=options.child
        )
    print(options.runs / runs_per_s, flush=True)


async def servers_rate(url: str, runs: int, servers: int, workers: int) -> float:
    """Write calls/s of `servers` processes, each driving runs/servers runs on the database at `url`."""
    share = runs // servers
    command = [sys.executable, __file__, "--database", url, "--runs", str(share), "--workers", str(workers)]
    children = [
        await asyncio.create_subprocess_exec(
            *command, "--child", f"p{servers}x{k}-", stdout=asyncio.subprocess.PIPE
        )
        for k in range(servers)
    ]
    outputs = [await child.communicate() for child in children]
    if any(child.returncode for child in children):
        raise RuntimeError("a bench server failed")
    slowest = max(float(out.decode()) for out, _ in outputs)
    return share * servers * WRITES_PER_RUN / slowest


async def pg_baseline_rate(url: str, commits: int) -> float:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("CREATE TABLE baseline (id BIGSERIAL PRIMARY KEY, doc TEXT NOT NULL)")
        started = time.perf_counter()
        for n in range(commits):
            await conn.execute("INSERT INTO baseline (doc) VALUES (%s)", (f"row {n}",))
        return commits / (time.perf_counter() - started)


async def postgres_main(options: argparse.Namespace) -> None:
    schema = f"bench_{secrets.token_hex(4)}"
    async with await psycopg.AsyncConnection.connect(options.database, autocommit=True) as admin:
        await admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    url = options.database + ("&" if "?" in options.database else "?") + f"options=-csearch_path%3D{schema}"
    try:
        commits = await pg_baseline_rate(url, options.runs * WRITES_PER_RUN)
        one = await servers_rate(url, options.runs, 1, options.workers)
        three = await servers_rate(url, options.runs, 3, options.workers)
    finally:
        async with await psycopg.AsyncConnection.connect(options.database, autocommit=True) as admin:
            await admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    print(f"postgresql baseline single-row insert+commit: {commits:.1f} commits/s")
    print(f"postgresql 1 server write calls: {one:.1f} calls/s")
    print(f"postgresql 3 servers write calls: {three:.1f} calls/s")
    print(f"ratio postgresql 1 server write calls / baseline commits: {one / commits:.2f}")
    print(f"ratio postgresql 3 servers / 1 server write calls: {three / one:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
