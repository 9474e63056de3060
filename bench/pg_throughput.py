"""The PostgreSQL part of `bench/engine_throughput.py --store postgresql`.

The same 3-step runs as the SQLite figures go through engines on one PostgreSQL database (a fresh schema,
dropped after): 1 server, then 3 server processes at once (each driving its share of the runs,
`--workers` at a time), beside the bare single-row insert+commit rate of that database, and the 3/1
ratio; `--rounds` times in turn (the medians, and each round's figures), with the CPU time a server's
event loop thread spent per write call (robust to other load, where calls/s is not). On a small machine
shared with the database this is a report, not a gate.

    .venv/bin/python bench/pg_throughput.py [--runs N] [--rounds N] [--database URL] [--workers N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg

from bench.pg_schema import add_database_option, fresh_schema
from bench.workload import PROCESS, STEPS, WRITES_PER_RUN
from engine.clock import SystemClock
from engine.core import Engine
from engine.identity import agent
from engine.org import OrgConfig


def add_options(parser: argparse.ArgumentParser) -> None:
    add_database_option(parser)
    parser.add_argument("--workers", type=int, default=4, help="postgresql: runs in flight per server")
    parser.add_argument("--child", help=argparse.SUPPRESS)


async def engine_rate(root: Path, runs: int, *, database: str, workers: int, tag: str) -> tuple[float, float]:
    """runs/s of one engine on `database`, `workers` runs in flight, and its event loop thread's CPU
    seconds per run."""
    folder = root / "three-steps"
    folder.mkdir(exist_ok=True)
    (folder / "PROCESS.md").write_text(textwrap.dedent(PROCESS).lstrip())
    org = OrgConfig.build(agents={"a_bench": "bench-token-1"})
    engine = await Engine.open(root / "engine", org, clock=SystemClock(), database=database)
    try:
        assert (await engine.publish(folder, {})).ok
        started, cpu = time.perf_counter(), time.thread_time()
        await asyncio.gather(*(_drive(engine, range(w, runs, workers), tag) for w in range(workers)))
        elapsed, cpu = time.perf_counter() - started, time.thread_time() - cpu
    finally:
        await engine.close()
    return runs / elapsed, cpu / runs


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
    """One server of the bench: drive its runs, print the seconds they took and its CPU seconds per run."""
    with tempfile.TemporaryDirectory() as tmp:
        runs_per_s, cpu_per_run = await engine_rate(
            Path(tmp), options.runs, database=options.database, workers=options.workers, tag=options.child
        )
    print(options.runs / runs_per_s, cpu_per_run, flush=True)


async def servers_rate(url: str, runs: int, servers: int, workers: int, tag: str) -> tuple[float, float]:
    """Write calls/s of `servers` processes, each driving runs/servers runs on the database at `url`, and
    the event loop thread CPU microseconds per write call (the median server's)."""
    share = runs // servers
    command = [sys.executable, __file__, "--database", url, "--runs", str(share), "--workers", str(workers)]
    children = [
        await asyncio.create_subprocess_exec(
            *command, "--child", f"{tag}p{servers}x{k}-", stdout=asyncio.subprocess.PIPE
        )
        for k in range(servers)
    ]
    outputs = [await c.communicate() for c in children]
    if any(c.returncode for c in children):
        raise RuntimeError("a bench server failed")
    figures = [[float(x) for x in out.decode().split()] for out, _ in outputs]
    slowest = max(seconds for seconds, _ in figures)
    cpu = statistics.median(cpu_per_run for _, cpu_per_run in figures) / WRITES_PER_RUN * 1e6
    return share * servers * WRITES_PER_RUN / slowest, cpu


async def baseline_rate(url: str, commits: int) -> float:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS baseline (id BIGSERIAL PRIMARY KEY, doc TEXT NOT NULL)"
        )
        started = time.perf_counter()
        for n in range(commits):
            await conn.execute("INSERT INTO baseline (doc) VALUES (%s)", (f"row {n}",))
        return commits / (time.perf_counter() - started)


async def postgres_main(options: argparse.Namespace) -> None:
    rounds = []
    async with fresh_schema(options.database) as url:
        for n in range(options.rounds):
            commits = await baseline_rate(url, options.runs * WRITES_PER_RUN)
            one = await servers_rate(url, options.runs, 1, options.workers, f"r{n}")
            three = await servers_rate(url, options.runs, 3, options.workers, f"r{n}")
            rounds.append(Round(commits, *one, *three))
    print(
        f"postgresql, {options.workers} runs in flight per server: medians of {options.rounds} rounds [each round's]"
    )
    for label, unit, figure in FIGURES:
        values = [figure(r) for r in rounds]
        print(f"{label}: {statistics.median(values):.2f} {unit}[{', '.join(f'{v:.2f}' for v in values)}]")


@dataclass(frozen=True)
class Round:
    commits: float
    one: float
    one_cpu: float
    three: float
    three_cpu: float


FIGURES: list[tuple[str, str, Callable[[Round], float]]] = [  # (what, its unit, its value in a round)
    ("postgresql baseline single-row insert+commit", "commits/s ", lambda r: r.commits),
    ("postgresql 1 server write calls", "calls/s ", lambda r: r.one),
    ("postgresql 1 server event loop CPU per write call", "us ", lambda r: r.one_cpu),
    ("postgresql 3 servers write calls", "calls/s ", lambda r: r.three),
    ("postgresql 3 servers event loop CPU per write call (median server)", "us ", lambda r: r.three_cpu),
    ("ratio postgresql 1 server write calls / baseline commits", "", lambda r: r.one / r.commits),
    ("ratio postgresql 3 servers / 1 server write calls", "", lambda r: r.three / r.one),
]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="1 and 3 servers in turn, this many times")
    add_options(parser)
    options = parser.parse_args()
    await (child(options) if options.child is not None else postgres_main(options))


if __name__ == "__main__":
    asyncio.run(main())
