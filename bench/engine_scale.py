"""Read latency against store size: get_work (agent, person) and list_runs through `engine.call` at
several run counts, with the ratio of each size's median to the smallest size's.

Runs are created in bulk (one transaction per batch, through the same runtime and store code a
`start_run` uses) so that 100k runs take seconds rather than minutes; every measured call goes through
`engine.call`. Flat ratios mean the queries are served by indexes, not scans.

    .venv/bin/python bench/engine_scale.py                       # 1k and 10k runs
    .venv/bin/python bench/engine_scale.py --sizes 1000,10000,100000
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity, agent, person
from engine.ids import new_id
from engine.org import OrgConfig
from engine.runtime.derive import derive
from engine.runtime.machine import Machine
from engine.store.state import Run
from engine.tools.context import canonical

AGENT_FIRST = """
---
name: agent-first
description: An agent step first.
inputs:
  ticket: string
steps:
  - id: work
    agent: Work the ticket.
  - id: done
    finish: done
---
"""
PERSON_FIRST = """
---
name: person-first
description: An approval first.
inputs:
  ticket: string
steps:
  - id: review
    person: reviewer
    approve: Review the ticket.
  - id: done
    finish: done
---
"""
BATCH = 2000
SAMPLES = 40
AGENT = agent("a_bench")
REVIEWER = person("mira@example.com")


async def grow(engine: Engine, clock: ManualClock, start: int, stop: int) -> None:
    """Add runs start..stop-1, alternating the two processes, as start_run would create them."""
    found = {name: await engine.catalog.get(name) for name in ("agent-first", "person-first")}
    for first in range(start, stop, BATCH):
        async with engine.store.transaction() as tx:
            for n in range(first, min(first + BATCH, stop)):
                record, process = found["agent-first" if n % 2 else "person-first"]  # type: ignore[misc]
                clock.advance(1)
                inputs = {"ticket": f"T-{n}"}
                run = Run(new_id("r"), process.name, record.version, "live", AGENT.id, "", None, inputs)
                machine = Machine(run, process, clock.now(), engine.org, record.bindings)
                machine.start()
                await tx.insert_run(run, derive(machine), [("ticket", canonical(inputs["ticket"]))])


async def median_ms(engine: Engine, who: Identity, tool: str, arguments: dict[str, Any]) -> float:
    for _ in range(5):
        await engine.call(who, tool, arguments)
    times = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        reply = await engine.call(who, tool, arguments)
        times.append(time.perf_counter() - started)
        if not reply["ok"]:
            raise RuntimeError(reply)
    return statistics.median(times) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated run counts, ascending")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    queries: list[tuple[str, Identity, str, dict[str, Any]]] = [
        ("get_work agent", AGENT, "get_work", {}),
        ("get_work person", REVIEWER, "get_work", {}),
        ("list_runs", REVIEWER, "list_runs", {}),
        ("list_runs process+state", REVIEWER, "list_runs", {"process": "person-first", "state": "waiting"}),
        ("list_runs inputs", REVIEWER, "list_runs", {"inputs": {"ticket": "T-7"}}),
    ]
    table: dict[str, list[float]] = {label: [] for label, *_ in queries}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        org = OrgConfig.build(
            groups={"g_review": [REVIEWER.id]}, people={REVIEWER.id: None}, agents={AGENT.id: None}
        )
        clock = ManualClock()
        engine = await Engine.open(root / "data", org, clock=clock)
        try:
            for name, text, bind in (
                ("agent-first", AGENT_FIRST, {}),
                ("person-first", PERSON_FIRST, {"reviewer": "g_review"}),
            ):
                folder = root / name
                folder.mkdir()
                (folder / "PROCESS.md").write_text(textwrap.dedent(text).lstrip())
                assert (await engine.publish(folder, bind)).ok
            have = 0
            for size in sizes:
                started = time.perf_counter()
                await grow(engine, clock, have, size)
                have = size
                print(f"{size:>8} runs (added in {time.perf_counter() - started:.1f}s)", flush=True)
                for label, who, tool, arguments in queries:
                    table[label].append(await median_ms(engine, who, tool, arguments))
        finally:
            await engine.close()
    sizes_head = "".join(f"{s:>10}" for s in sizes)
    ratio_head = "".join(f"{f'{s}/{sizes[0]}':>14}" for s in sizes[1:])
    print(f"\nmedian ms over {SAMPLES} calls  {sizes_head}  {ratio_head}")
    for label, values in table.items():
        cells = "".join(f"{v:10.2f}" for v in values)
        ratio = "".join(f"{v / values[0]:14.2f}" for v in values[1:])
        print(f"{label:<27}{cells}  {ratio}")


if __name__ == "__main__":
    asyncio.run(main())
