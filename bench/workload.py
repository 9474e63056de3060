"""The runs the engine benches drive: two small processes, an org for them, an engine with both
published, and a client driving runs one call after another, timing each call.

Every bench that compares write figures drives the same runs, so the figures of one bench can be
read beside another's.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from engine.clock import SystemClock
from engine.core import Engine
from engine.org import OrgConfig, ServerSettings

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
REVIEWED = """
---
name: reviewed
description: Fill the run data, work on, then a person approves.
steps:
  - id: fill
    agent: Put the data in.
    output: { note: string }
  - id: work
    agent: Work on it.
    output: { note: string }
  - id: review
    person: reviewers
    approve: Approve.
  - id: done
    finish: approved
---
"""
STEPS = ("one", "two", "three")
WRITES_PER_RUN = 1 + 2 * len(STEPS)
TRANSITIONS_PER_RUN = 2 * len(STEPS) + 1
REVIEWER = "rita@example.com"


def write_processes(root: Path) -> dict[str, Path]:
    folders = {}
    for name, text in (("three-steps", PROCESS), ("reviewed", REVIEWED)):
        folder = root / "processes" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "PROCESS.md").write_text(textwrap.dedent(text).lstrip())
        folders[name] = folder
    return folders


def bench_org(agents: int) -> OrgConfig:
    return OrgConfig.build(
        groups={"reviewers": [REVIEWER]},
        people={REVIEWER: "bench-person-token"},
        agents={f"a_{n}": f"bench-agent-token-{n}" for n in range(agents)},
        server=ServerSettings(run_data_bytes=1_100_000),
    )


async def open_engine(root: Path, name: str) -> Engine:
    engine = await Engine.open(root / name, bench_org(32), clock=SystemClock())
    folders = write_processes(root)
    assert (await engine.publish(folders["three-steps"], {})).ok
    assert (await engine.publish(folders["reviewed"], {"reviewers": "reviewers"})).ok
    return engine


def checked(reply: dict[str, Any]) -> Any:
    if not reply["ok"]:
        raise RuntimeError(reply)
    return reply["data"]


async def drive_runs(
    call: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]], tag: str, runs: int
) -> list[float]:
    """`runs` runs of the 3-step process, one call after another; the milliseconds of each call."""
    took: list[float] = []

    async def timed(tool: str, arguments: dict[str, Any]) -> Any:
        started = time.perf_counter()
        reply = await call(tool, arguments)
        took.append((time.perf_counter() - started) * 1000)
        return checked(reply)

    for n in range(runs):
        run = await timed("start_run", {"process": "three-steps", "inputs": {}, "requestId": f"s{tag}-{n}"})
        run_id = run["run"]["id"]
        for step in STEPS:
            claim = await timed("claim", {"runId": run_id, "stepId": step, "requestId": f"c{tag}-{n}{step}"})
            await timed(
                "submit",
                {
                    "token": claim["token"],
                    "output": {"note": step},
                    "summary": "s",
                    "requestId": f"u{tag}-{n}{step}",
                },
            )
    return took
