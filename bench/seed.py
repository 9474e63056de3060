"""Large test data in bulk: runs of a process whose first step is a person's approval, written through the
store in batches (the runtime and store code a `start_run` uses, one transaction per batch), so that
100,000 open work items take seconds, not 100,000 tool calls. Shared by the benches and the tests.
"""

from __future__ import annotations

import textwrap
from datetime import timedelta
from pathlib import Path

from engine.clock import Clock, ManualClock
from engine.core import Engine
from engine.ids import new_id
from engine.runtime.derive import derive
from engine.runtime.machine import Machine
from engine.store.state import Run
from engine.tools.context import canonical

APPROVAL = "bulk-approval"
APPROVAL_TEXT = """
---
name: bulk-approval
description: One approval per ticket.
inputs:
  ticket: string
steps:
  - id: review
    person: reviewer
    approve: Review the ticket and decide.
    due: 2d
  - id: done
    finish: done
---
"""
BATCH = 2000


async def publish_approval(engine: Engine, folder: Path, group: str) -> None:
    """Publish the bulk process with its `reviewer` role bound to `group`."""
    target = folder / APPROVAL
    target.mkdir(parents=True, exist_ok=True)
    (target / "PROCESS.md").write_text(textwrap.dedent(APPROVAL_TEXT).lstrip())
    published = await engine.publish(target, {"reviewer": group})
    assert published.ok, published.issues


async def seed_approvals(
    engine: Engine, clock: Clock, count: int, *, starter: str = "a_seed", first: int = 0
) -> list[str]:
    """`count` runs of the bulk process, each with one open approval, a second apart; their ids in order.

    A `ManualClock` moves on a second per run; a running clock is not moved, so the runs are dated
    the seconds before now."""
    record, process = await engine.catalog.get(APPROVAL)  # type: ignore[misc]
    origin = clock.now() if isinstance(clock, ManualClock) else clock.now() - timedelta(seconds=count)
    ids: list[str] = []
    for start in range(first, first + count, BATCH):
        async with engine.store.transaction() as tx:
            for n in range(start, min(start + BATCH, first + count)):
                at = origin + timedelta(seconds=n - first + 1)
                if isinstance(clock, ManualClock):
                    clock.advance(1)
                inputs = {"ticket": f"T-{n}"}
                run = Run(new_id("r"), process.name, record.version, "live", starter, "", None, inputs)
                machine = Machine(run, process, at, engine.org, record.bindings)
                machine.start()
                await tx.insert_run(run, derive(machine), [("ticket", canonical(inputs["ticket"]))])
                ids.append(run.id)
    return ids
