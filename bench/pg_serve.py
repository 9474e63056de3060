"""MCP agents against 1 and 3 real `apc serve` processes on one PostgreSQL database (a fresh schema each
time, dropped after), the agents spread evenly over the servers.

Each agent's client is made, and a warm-up run driven, before the clock starts; then every agent drives
its runs (3-step runs, one call after another). Printed per server count: write calls/s, p50 and p99
of a call, CPU time per call (the servers', and the whole machine's busy time: Linux /proc, noisy on a
shared machine), and the times each server applied due timers (`Engine.tick`, counted by this bench in
the server process) per second of the measured window: other servers' commits wake a server to tick.
`--rounds` times in turn (the medians, and each round's figures).

    .venv/bin/python bench/pg_serve.py [--agents N] [--runs-each N] [--rounds N] [--database URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.old_mcp_client import McpHttpClient
from bench.pg_schema import add_database_option, fresh_schema
from bench.serving import ORG_TOML, agents_toml, free_port, wait_serving
from bench.workload import REVIEWER, drive_runs, write_processes

SHARED = "[server]\nsecrets_file = 'secrets.key'\nfiles = 'files'\n"
"""Servers on one database share the secrets file and the uploaded files."""


@dataclass(frozen=True)
class Figures:
    calls_per_s: float
    p50_ms: float
    p99_ms: float
    ticks_per_s: float
    """Due-timer ticks per second per server in the measured window (the median server's)."""
    cpu_us: float
    """The servers' CPU time (all their threads, user and system) per call in the measured window."""
    machine_us: float
    """The machine's busy CPU time (every process: the servers, this bench, PostgreSQL) per call."""


def counting_serve(ticks_file: str, argv: list[str]) -> int:
    """`apc serve` with every `Engine.tick` stamped; the wall times go to `ticks_file` at exit."""
    from engine import cli
    from engine.core import Engine

    stamps: list[float] = []
    tick = Engine.tick

    async def counted(self: Engine) -> None:
        stamps.append(time.time())
        await tick(self)

    Engine.tick = counted  # type: ignore[method-assign]
    try:
        return cli.main(argv)
    finally:
        Path(ticks_file).write_text("".join(f"{t}\n" for t in stamps))


def cpu_seconds(pid: int) -> float:
    """A process's user and system CPU time so far (Linux: /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_seconds() -> float:
    """The CPU time all processes on the machine have spent so far (Linux: /proc/stat, all but idle and iowait)."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def launch(root: Path, n: int, url: str) -> tuple[subprocess.Popen[str], int, Path]:
    port = free_port()
    command = [sys.executable, __file__, "--serve-child", str(root / f"ticks{n}"), "serve"]
    command += ["--config", str(root / "org.toml"), "--data", str(root / f"data{n}"), "--port", str(port)]
    command += ["--database", url]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    log = root / f"serve{n}.log"
    with log.open("w") as out:  # a file, not a pipe: the server logs every call
        process = subprocess.Popen(command, cwd=root, env=env, stderr=out, text=True)
    return process, port, log


async def servers_figures(root: Path, url: str, servers: int, agents: int, runs_each: int) -> Figures:
    write_processes(root)
    config = SHARED + ORG_TOML.format(reviewer=REVIEWER).replace("[server]\n", "", 1)
    config += agents_toml(agents)
    (root / "org.toml").write_text(config)
    launched = [launch(root, n, url) for n in range(servers)]
    try:
        for process, _, log in launched:
            await wait_serving(process, log)
        ports = [port for _, port, _ in launched]
        clients = [
            McpHttpClient(f"http://127.0.0.1:{ports[n % servers]}/mcp", f"bench-agent-token-{n}")
            for n in range(agents)
        ]
        async with contextlib.AsyncExitStack() as stack:
            for client in clients:
                await stack.enter_async_context(client)
            await asyncio.gather(*(drive_runs(c.call, f"w{n}", 1) for n, c in enumerate(clients)))
            cpu, busy = sum(cpu_seconds(process.pid) for process, _, _ in launched), machine_seconds()
            began, started = time.time(), time.perf_counter()
            runs = await asyncio.gather(
                *(drive_runs(c.call, f"m{n}", runs_each) for n, c in enumerate(clients))
            )
            elapsed, ended = time.perf_counter() - started, time.time()
            cpu = sum(cpu_seconds(process.pid) for process, _, _ in launched) - cpu
            busy = machine_seconds() - busy
    finally:
        for process, _, _ in launched:
            process.terminate()
        for process, _, _ in launched:
            process.wait(timeout=30)
    took = [ms for values in runs for ms in values]
    ticks = []
    for n in range(servers):
        stamps = [float(line) for line in (root / f"ticks{n}").read_text().split()]
        ticks.append(sum(began <= t <= ended for t in stamps) / (ended - began))
    p99 = statistics.quantiles(took, n=100, method="inclusive")[98]
    per_call = 1e6 / len(took)
    return Figures(
        len(took) / elapsed,
        statistics.median(took),
        p99,
        statistics.median(ticks),
        cpu * per_call,
        busy * per_call,
    )


SHOWN = {  # what, and its unit, by the field of Figures
    "calls_per_s": "write calls: calls/s",
    "p50_ms": "p50: ms",
    "p99_ms": "p99: ms",
    "ticks_per_s": "due-timer ticks per server: /s",
    "cpu_us": "servers' CPU per call: us",
    "machine_us": "machine's CPU per call (servers, bench, PostgreSQL): us",
}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_database_option(parser)
    parser.add_argument("--agents", type=int, default=24, help="MCP agents, spread over the servers")
    parser.add_argument(
        "--runs-each", type=int, default=10, help="runs each agent drives (7 write calls each)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="1 and 3 servers in turn, this many times")
    options = parser.parse_args()
    rounds: dict[int, list[Figures]] = {1: [], 3: []}
    for _ in range(options.rounds):
        for servers in rounds:
            async with fresh_schema(options.database) as url:
                with tempfile.TemporaryDirectory() as tmp:
                    figures = await servers_figures(
                        Path(tmp), url, servers, options.agents, options.runs_each
                    )
            rounds[servers].append(figures)
    print(
        f"{options.agents} MCP agents, {options.runs_each} runs each: medians of {options.rounds} rounds [each]"
    )
    for name, label in SHOWN.items():
        what, unit = label.split(": ")
        for servers, each in rounds.items():
            values = [getattr(f, name) for f in each]
            shown = ", ".join(f"{v:.1f}" for v in values)
            print(f"{servers} server(s) {what}: {statistics.median(values):.1f} {unit} [{shown}]")
    one, three = (statistics.median(f.calls_per_s for f in rounds[s]) for s in (1, 3))
    print(f"ratio 3 servers / 1 server write calls: {three / one:.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--serve-child":
        sys.exit(counting_serve(sys.argv[2], sys.argv[3:]))
    asyncio.run(main())
