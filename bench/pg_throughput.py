"""The PostgreSQL part of `bench/engine_throughput.py --store postgresql`.

The same 3-step runs as the SQLite figures go through engines on one PostgreSQL database (a fresh schema,
dropped after): 1 server, then 3 server processes at once (each driving its share of the runs,
`--workers` at a time), beside the bare single-row insert+commit rate of that database in the same run,
and the 3/1 ratio. On a small machine shared with the database this is a report, not a gate.

    .venv/bin/python bench/pg_throughput.py [--runs N] [--database URL] [--workers N]
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

from bench.engine_throughput import PROCESS, STEPS, WRITES_PER_RUN
from engine.clock import SystemClock
from engine.core import Engine
from engine.identity import agent
from engine.org import OrgConfig

DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/test"


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database", default=os.environ.get("APC_TEST_DATABASE_URL") or DEFAULT_DATABASE)
    parser.add_argument("--workers", type=int, default=4, help="postgresql: runs in flight per server")
    parser.add_argument("--child", help=argparse.SUPPRESS)


async def engine_rate(root: Path, runs: int, *, database: str, workers: int, tag: str) -> float:
    """runs/s of one engine on `database`, `workers` runs in flight."""
    folder = root / "three-steps"
    folder.mkdir(exist_ok=True)
    (folder / "PROCESS.md").write_text(textwrap.dedent(PROCESS).lstrip())
    org = OrgConfig.build(agents={"a_bench": "bench-token-1"})
    engine = await Engine.open(root / "engine", org, clock=SystemClock(), database=database)
    try:
        assert (await engine.publish(folder, {})).ok
        started = time.perf_counter()
        await asyncio.gather(*(_drive(engine, range(w, runs, workers), tag) for w in range(workers)))
        elapsed = time.perf_counter() - started
    finally:
        await engine.close()
    return runs / elapsed


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


async def child(options: argparse.Namespace) -> None:
    """One server of the bench: drive its runs, print the seconds they took."""
    with tempfile.TemporaryDirectory() as tmp:
        runs_per_s = await engine_rate(
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
    outputs = [await c.communicate() for c in children]
    if any(c.returncode for c in children):
        raise RuntimeError("a bench server failed")
    slowest = max(float(out.decode()) for out, _ in outputs)
    return share * servers * WRITES_PER_RUN / slowest


async def baseline_rate(url: str, commits: int) -> float:
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
        commits = await baseline_rate(url, options.runs * WRITES_PER_RUN)
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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    add_options(parser)
    options = parser.parse_args()
    await (child(options) if options.child is not None else postgres_main(options))


if __name__ == "__main__":
    asyncio.run(main())
