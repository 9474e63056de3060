"""Engine write throughput, each figure beside a baseline measured in the same run.

The baseline (bare aiosqlite insert+commit, in interleaved pairs with the engine's bursts) makes a
figure read as a share of what this disk allows, not a number that moves with the machine. Figures:
a single client through `engine.call`; 8 and 32 concurrent clients (calls, commits, batch size, the
event loop thread's CPU per call); renew, submit and decide at 1 KB to 1 MB of run data; MCP agents
against `apc serve`; SpiffWorkflow's durable transitions when the `bench` extra is installed.
`--store postgresql` runs `bench/pg_throughput.py`'s figures instead; `--profile` shows where a
single client's call spends its CPU; `--single` runs only the pairs and SpiffWorkflow.

    .venv/bin/python bench/engine_throughput.py [--runs N] [--samples N] [--store sqlite|postgresql]
                                                [--profile] [--rounds N] [--single]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import pg_throughput
from bench.old_mcp_client import McpHttpClient
from bench.serving import ORG_TOML, agents_toml, free_port, wait_serving
from bench.workload import (
    REVIEWER,
    TRANSITIONS_PER_RUN,
    WRITES_PER_RUN,
    checked,
    drive_runs,
    open_engine,
    write_processes,
)
from engine.core import Engine, collect_less
from engine.identity import Identity, agent, person
from engine.store.sqlite import SqliteStore, SqliteTransaction, connect

SIZES = {"1 KB": 1_000, "100 KB": 100_000, "1 MB": 1_000_000}


def out(label: str, value: float, unit: str) -> None:
    print(f"{label}: {value:.1f} {unit}", flush=True)


def ratio(what: str, value: float) -> None:
    print(f"ratio {what}: {value:.2f}", flush=True)


def pair_ratios(values: list[float]) -> None:
    """Each interleaved pair's ratio, in order of size: the spread behind a median."""
    print(f"pair ratios: {' '.join(f'{r:.2f}' for r in sorted(values))}", flush=True)


def caller(engine: Engine, n: int) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """Calls through `engine.call` as agent a_n."""
    who = agent(f"a_{n}")
    return lambda tool, arguments: engine.call(who, tool, arguments)


@dataclass
class Clients:
    """What concurrent clients through `engine.call` did: the event loop thread's CPU per call is what
    bounds them once batches hide the fsync."""

    calls_per_s: float
    commits_per_s: float
    batch: float
    cpu_us: float


async def engine_clients(root: Path, clients: int, runs: int, name: str = "engine") -> Clients:
    """Write calls/s, commits/s, mean batch and CPU per write call with `clients` concurrent clients,
    `runs` runs in all."""
    engine = await open_engine(root, f"{name}-{clients}")
    store = engine.store
    assert isinstance(store, SqliteStore)
    try:
        await asyncio.gather(*(drive_runs(caller(engine, w), f"warm{w}", 1) for w in range(clients)))
        before = store.writer_stats.commits, store.writer_stats.requests
        started, used = time.perf_counter(), time.thread_time()
        await asyncio.gather(
            *(drive_runs(caller(engine, w), f"{w}", runs // clients) for w in range(clients))
        )
        elapsed, used = time.perf_counter() - started, time.thread_time() - used
        commits = store.writer_stats.commits - before[0]
        requests = store.writer_stats.requests - before[1]
    finally:
        await engine.close()
    calls = (runs // clients) * clients * WRITES_PER_RUN
    return Clients(calls / elapsed, commits / elapsed, requests / commits, used / calls * 1e6)


async def without_run_log(root: Path, runs: int) -> float:
    """Single-client write calls/s of the same runs with the run log's insert left out."""
    original = SqliteTransaction.append_log

    async def skip(self: SqliteTransaction, run_id: str, entries: object) -> None:
        return None

    SqliteTransaction.append_log = skip  # type: ignore[method-assign]
    try:
        return (await engine_clients(root, 1, runs, "no-log")).calls_per_s
    finally:
        SqliteTransaction.append_log = original  # type: ignore[method-assign]


async def baseline_rate(root: Path, commits: int, row_bytes: int) -> float:
    """Bare aiosqlite: one autocommit INSERT (one aiosqlite call, one commit) per row."""
    conn = await connect(root / "baseline.db")
    row = "x" * row_bytes
    try:
        await conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)")
        started = time.perf_counter()
        for _ in range(commits):
            await conn.execute("INSERT INTO t (doc) VALUES (?)", (row,))
        elapsed = time.perf_counter() - started
    finally:
        await conn.close()
    return commits / elapsed


@dataclass
class Pairs:
    """Per pair: the engine's write calls/s, the bare commits/s, their ratio, the engine's CPU per call."""

    calls: list[float] = field(default_factory=list)
    commits: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    row_bytes: int = 0


async def single_rounds(root: Path, rounds: int, runs: int) -> Pairs:
    """`rounds` pairs, each a burst of `runs` single-client runs then as many bare commits (rows the
    size of the runs' documents), in one process, after a warm-up burst: a busy disk or CPU weighs on
    both halves of a pair alike."""
    engine = await open_engine(root, "engine-rounds")
    call = caller(engine, 0)
    conn = await connect(root / "rounds-baseline.db")
    pairs = Pairs()
    try:
        await drive_runs(call, "warm", max(1, runs // 4))
        store = engine.store
        assert isinstance(store, SqliteStore)
        pairs.row_bytes = int((await store._one("SELECT AVG(LENGTH(doc)) FROM runs"))[0])
        row = "x" * pairs.row_bytes
        await conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)")
        for _ in range(max(1, runs // 4) * WRITES_PER_RUN):  # the baseline's warm-up
            await conn.execute("INSERT INTO t (doc) VALUES (?)", (row,))
        for n in range(rounds):
            wall, used = time.perf_counter(), time.thread_time()
            calls = len(await drive_runs(call, f"round{n}-", runs))
            wall, used = time.perf_counter() - wall, time.thread_time() - used
            started = time.perf_counter()
            for _ in range(calls):
                await conn.execute("INSERT INTO t (doc) VALUES (?)", (row,))
            pairs.calls.append(calls / wall)
            pairs.commits.append(calls / (time.perf_counter() - started))
            pairs.ratios.append(pairs.calls[-1] / pairs.commits[-1])
            pairs.cpu_us.append(used / calls * 1e6)
    finally:
        await conn.close()
        await engine.close()
    return pairs


async def per_tool_cost(root: Path, samples: int) -> dict[tuple[str, str], float]:
    """Median milliseconds of renew, submit and decide on a run holding each size of run data."""
    engine = await open_engine(root, "engine-sizes")
    who, reviewer = agent("a_0"), person(REVIEWER)
    costs: dict[tuple[str, str], float] = {}
    n = 0

    async def call(identity: Identity, tool: str, **arguments: Any) -> tuple[Any, float]:
        nonlocal n
        n += 1
        if tool not in ("get_run",):
            arguments["requestId"] = f"r{n}"
        started = time.perf_counter()
        reply = await engine.call(identity, tool, arguments)
        return checked(reply), (time.perf_counter() - started) * 1000

    try:
        for label, size in SIZES.items():
            took: dict[str, list[float]] = {"renew": [], "submit": [], "decide": []}
            for _ in range(samples):
                run_id = (await call(who, "start_run", process="reviewed", inputs={}))[0]["run"]["id"]
                token = (await call(who, "claim", runId=run_id, stepId="fill"))[0]["token"]
                await call(who, "submit", token=token, output={"note": "x" * size}, summary="s")
                token = (await call(who, "claim", runId=run_id, stepId="work"))[0]["token"]
                for _ in range(3):
                    renewed, ms = await call(who, "renew", token=token, progress="going")
                    token = renewed["token"]
                    took["renew"].append(ms)
                took["submit"].append(
                    (await call(who, "submit", token=token, output={"note": "w"}, summary="s"))[1]
                )
                view = (await call(reviewer, "get_run", runId=run_id))[0]
                [item] = view["workItems"]
                took["decide"].append(
                    (
                        await call(
                            reviewer,
                            "decide",
                            runId=run_id,
                            workItemId=item["id"],
                            snapshot=item["snapshot"],
                            decision="approved",
                        )
                    )[1]
                )
            for tool, values in took.items():
                costs[(tool, label)] = statistics.median(values)
    finally:
        await engine.close()
    return costs


@dataclass
class McpFigures:
    calls_per_s: float
    p50_ms: float
    p99_ms: float
    warm_up_calls_per_s: float
    warm_up_slowest_ms: float


async def mcp_agents(root: Path, agents: int, runs_each: int) -> McpFigures:
    """`agents` MCP clients driving runs against `apc serve`, after a warm-up run each (the connections
    opening, the server's first calls, all at once), measured apart."""
    base = root / f"serve-{agents}"
    write_processes(base)
    (base / "org.toml").write_text(ORG_TOML.format(reviewer=REVIEWER) + agents_toml(agents))
    port = free_port()
    command = [sys.executable, "-m", "engine.cli", "serve", "--config", str(base / "org.toml")]
    command += ["--data", str(base / "data"), "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    log = (base / "serve.log").open("w")  # a file, not a pipe: the server logs every call
    server = subprocess.Popen(command, cwd=base, env=env, stderr=log, text=True)
    try:
        await wait_serving(server, base / "serve.log")
        url = f"http://127.0.0.1:{port}/mcp"

        # Made before the clock starts: each makes an SSL context, which costs this process's CPU.
        clients = [McpHttpClient(url, f"bench-agent-token-{n}") for n in range(agents)]
        async with contextlib.AsyncExitStack() as stack:
            for client in clients:
                await stack.enter_async_context(client)
            # A warm-up run each, as the engine's figures have: the first calls open the connections and
            # meet the server's first-call work, all 32 at once.
            started = time.perf_counter()
            warm = await asyncio.gather(*(drive_runs(c.call, f"w{n}", 1) for n, c in enumerate(clients)))
            warm_s = time.perf_counter() - started
            started = time.perf_counter()
            runs = await asyncio.gather(
                *(drive_runs(c.call, f"m{n}", runs_each) for n, c in enumerate(clients))
            )
            elapsed = time.perf_counter() - started
        took = [ms for values in runs for ms in values]
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    p99 = statistics.quantiles(took, n=100, method="inclusive")[98]
    first = [ms for values in warm for ms in values]
    return McpFigures(len(took) / elapsed, statistics.median(took), p99, len(first) / warm_s, max(first))


SPIFF_SETTINGS = (
    "SpiffWorkflow {version}, 3 sequential Simple tasks per workflow, in-memory workflow serialised "
    "with JSONSerializer after every task, INSERT OR REPLACE in sqlite3 autocommit, WAL, synchronous=FULL, "
    "after a warm-up"
)


class Spiff:
    """SpiffWorkflow's loop, ready to run bursts: a workflow of three sequential tasks (its own spec
    API), the whole workflow serialised with its JSON serializer after every task it runs and written
    to SQLite in our store's mode, one autocommit statement (one commit) per transition."""

    def __init__(self, path: Path) -> None:
        from SpiffWorkflow.serializer.json import JSONSerializer
        from SpiffWorkflow.specs.Simple import Simple
        from SpiffWorkflow.specs.WorkflowSpec import WorkflowSpec
        from SpiffWorkflow.version import __version__
        from SpiffWorkflow.workflow import Workflow

        self._workflow = Workflow
        self._spec = WorkflowSpec("three-steps", addstart=True)
        previous = self._spec.start
        for name in ("one", "two", "three"):
            task = Simple(self._spec, name)
            previous.connect(task)
            previous = task
        self._serializer = JSONSerializer()
        self.settings = SPIFF_SETTINGS.format(version=__version__)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE workflows (id INTEGER PRIMARY KEY, state TEXT NOT NULL)")
        self._next = 0

    def burst(self, workflows: int) -> float:
        """Durable transitions/s over `workflows` workflows."""
        transitions = 0
        started = time.perf_counter()
        for n in range(self._next, self._next + workflows):
            workflow = self._workflow(self._spec)
            while workflow.run_next(halt_on_manual=False):
                state = workflow.serialize(self._serializer)
                self._db.execute("INSERT OR REPLACE INTO workflows (id, state) VALUES (?, ?)", (n, state))
                transitions += 1
        self._next += workflows
        return transitions / (time.perf_counter() - started)

    def close(self) -> None:
        self._db.close()


PROFILE_PARTS: tuple[tuple[str, Callable[[str, str], bool]], ...] = (
    # (part, test on a profiled function's file and name); the first that matches takes its time.
    ("SQLite statements and COMMIT", lambda file, name: "sqlite3." in name),
    ("JSON", lambda file, name: "/json/" in file or "_json" in name),
    (
        "hashing, sealing, deflating",
        lambda file, name: any(w in name for w in ("_hashlib", "AESGCM", "zlib")),
    ),
    ("pydantic argument checks", lambda file, name: "pydantic" in file or "pydantic" in name),
    ("engine store (Python)", lambda file, name: "/engine/store/" in file),
    ("engine tools (dispatch, checks, views)", lambda file, name: "/engine/tools/" in file),
    ("engine runtime (transitions)", lambda file, name: "/engine/runtime/" in file),
    ("event loop, tasks, futures", lambda file, name: "/asyncio/" in file or "_asyncio" in name),
)


async def profile_single(root: Path, runs: int) -> None:
    """Single-client write calls under cProfile (the thread's CPU time), by part of the engine."""
    engine = await open_engine(root, "engine-profile")
    call = caller(engine, 0)
    try:
        await drive_runs(call, "warm", max(1, runs // 10))
        profile = cProfile.Profile(time.thread_time)
        wall, cpu = time.perf_counter(), time.thread_time()
        profile.enable()
        calls = len(await drive_runs(call, "p", runs))
        profile.disable()
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    finally:
        await engine.close()
    parts = dict.fromkeys([part for part, _ in PROFILE_PARTS] + ["other Python"], 0.0)

    def part_of(file: str, name: str) -> str | None:
        return next((part for part, test in PROFILE_PARTS if test(file, name)), None)

    # A built-in no rule names (len, isinstance, dict.get, ...) counts for the parts that called it.
    for (file, _, name), (_, _, own, _, callers) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        part = part_of(file, name)
        if part is None and file == "~" and callers:
            for (caller_file, _, caller_name), (_, _, share, _) in callers.items():
                parts[part_of(caller_file, caller_name) or "other Python"] += share
        else:
            parts[part or "other Python"] += own
    total = sum(parts.values())
    out("profiled write call, wall", wall / calls * 1e6, "us")
    out("profiled write call, CPU of the event loop's thread", cpu / calls * 1e6, "us")
    out("profiled write call, waiting (fsync, scheduler)", max(wall - cpu, 0) / calls * 1e6, "us")
    for part, own in sorted(parts.items(), key=lambda item: -item[1]):
        out(f"profile {part}", own / total * 100, f"% of CPU ({own / calls * 1e6:.0f} us/call)")


async def main() -> None:
    collect_less()  # the engine's collector settings as `apc serve` runs it
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=192, help="runs per engine scenario (default 192)")
    parser.add_argument("--samples", type=int, default=5, help="runs per size for the per-tool cost")
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--profile", action="store_true", help="only where a single-client call's time goes")
    parser.add_argument(
        "--rounds",
        type=int,
        default=7,
        help="the single client's interleaved pairs (runs/rounds runs, then as many bare commits; default 7)",
    )
    parser.add_argument(
        "--single",
        action="store_true",
        help="only the single client's pairs, its CPU per call, and SpiffWorkflow",
    )
    pg_throughput.add_options(parser)
    options = parser.parse_args()
    if options.store == "postgresql":
        await pg_throughput.postgres_main(options)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if options.profile:
            await profile_single(root, options.runs)
            return
        pairs = await single_rounds(root, options.rounds, max(1, options.runs // options.rounds))
        single = statistics.median(pairs.calls)
        print(
            "baseline settings: aiosqlite, WAL, synchronous=FULL, one autocommit INSERT per commit, "
            f"{pairs.row_bytes}-byte rows"
        )
        print(f"single client: {options.rounds} interleaved pairs, medians; load {os.getloadavg()[0]:.1f}")
        out("baseline insert+commit", statistics.median(pairs.commits), "commits/s")
        out("single client write calls", single, "calls/s")
        out("single client step transitions", single * TRANSITIONS_PER_RUN / WRITES_PER_RUN, "transitions/s")
        ratio("single-client write calls / baseline commits", statistics.median(pairs.ratios))
        pair_ratios(pairs.ratios)
        if options.single:
            out(
                "single client CPU per write call (event loop thread), median",
                statistics.median(pairs.cpu_us),
                "us",
            )
            await spiff_versus(root, options.runs, options.rounds, single)
            return
        logged = await engine_clients(root, 1, options.runs)
        out("single client mean batch", logged.batch, "requests/commit")
        unlogged = await without_run_log(root, options.runs)
        out("single client write calls, once, with the run log", logged.calls_per_s, "calls/s")
        out("single client write calls, once, without the run log", unlogged, "calls/s")
        ratio("with / without the run log write calls", logged.calls_per_s / unlogged)
        for clients in (8, 32):
            figures = await engine_clients(root, clients, options.runs)
            out(f"{clients} clients write calls", figures.calls_per_s, "calls/s")
            out(f"{clients} clients commits", figures.commits_per_s, "commits/s")
            out(f"{clients} clients mean batch", figures.batch, "requests/commit")
            out(f"{clients} clients CPU per write call (event loop thread)", figures.cpu_us, "us")
            ratio(f"{clients} clients event loop thread busy", figures.calls_per_s * figures.cpu_us / 1e6)
            ratio(f"{clients} clients / single client write calls", figures.calls_per_s / single)
        for (tool, size), ms in (await per_tool_cost(root, options.samples)).items():
            print(f"{tool} at {size} of run data: {ms:.2f} ms", flush=True)
        for agents in (8, 32):
            mcp = await mcp_agents(root, agents, max(1, options.runs // agents))
            out(f"{agents} MCP agents against apc serve", mcp.calls_per_s, "calls/s")
            print(f"{agents} MCP agents p50: {mcp.p50_ms:.2f} ms", flush=True)
            print(f"{agents} MCP agents p99: {mcp.p99_ms:.2f} ms", flush=True)
            out(f"{agents} MCP agents, warm-up run (not counted above)", mcp.warm_up_calls_per_s, "calls/s")
            print(
                f"{agents} MCP agents, warm-up run, slowest call: {mcp.warm_up_slowest_ms:.2f} ms", flush=True
            )
        await spiff_versus(root, options.runs, options.rounds, single)


async def spiff_versus(root: Path, runs: int, rounds: int, single: float) -> None:
    """SpiffWorkflow's durable transitions/s beside ours with 32 concurrent clients through
    `engine.call` (group commit; Spiff's loop has no concurrency of its own), as interleaved pairs
    after a warm-up of each (a burst of runs of ours, then as many Spiff workflows), and beside the
    single client's median."""
    try:
        spiff = Spiff(root / "spiff.db")
    except ImportError as exc:
        print(
            f"SpiffWorkflow: not measured (SpiffWorkflow is not installed: {exc}; pip install -e '.[bench]')"
        )
        return
    engine = await open_engine(root, "engine-spiff")
    clients, each = 32, max(4, runs // rounds // 32)
    ours: list[float] = []
    theirs: list[float] = []
    try:
        await asyncio.gather(*(drive_runs(caller(engine, w), f"warm{w}", 1) for w in range(clients)))
        spiff.burst(max(1, runs // 8))
        for n in range(rounds):
            started = time.perf_counter()
            await asyncio.gather(*(drive_runs(caller(engine, w), f"{n}-{w}", each) for w in range(clients)))
            ours.append(clients * each * TRANSITIONS_PER_RUN / (time.perf_counter() - started))
            theirs.append(spiff.burst(clients * each))
    finally:
        spiff.close()
        await engine.close()
    print(f"SpiffWorkflow settings: {spiff.settings}")
    print(
        f"SpiffWorkflow beside 32 clients: {rounds} interleaved pairs ({clients * each} runs, then as many workflows)"
    )
    out("SpiffWorkflow durable transitions", statistics.median(theirs), "transitions/s")
    alone = single * TRANSITIONS_PER_RUN / WRITES_PER_RUN
    out("engine durable transitions (single client)", alone, "transitions/s")
    ratio("engine / SpiffWorkflow durable transitions", alone / statistics.median(theirs))
    out(
        "engine durable transitions (32 clients through engine.call)",
        statistics.median(ours),
        "transitions/s",
    )
    pairs = [mine / spiffs for mine, spiffs in zip(ours, theirs, strict=True)]
    ratio("engine 32 clients / SpiffWorkflow durable transitions", statistics.median(pairs))
    pair_ratios(pairs)


if __name__ == "__main__":
    asyncio.run(main())
