"""Tool calls made in process, through `engine.call`, the way agents and people make them.

`call` gives a write a fresh `requestId` unless the test names one; `decide` is a person's decision on
an open work item, from the ids the item carries.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from engine.core import Engine
from engine.identity import Identity

READS = ("describe", "list_processes", "get_run", "get_work", "list_runs")


def rid() -> str:
    """A fresh requestId."""
    return str(uuid.uuid4())


async def call(engine: Engine, who: Identity, tool: str, **arguments: Any) -> dict[str, Any]:
    """`who` calls `tool`; the envelope is returned. A write gets a fresh requestId unless one is given."""
    if tool not in READS:
        arguments.setdefault("requestId", rid())
    return await engine.call(who, tool, arguments)


async def decide(
    engine: Engine, who: Identity, run_id: str, item: Mapping[str, Any], decision: str, **extra: Any
) -> dict[str, Any]:
    """`who` decides the open work item `item` (as a run view lists it) of run `run_id`: the envelope."""
    return await call(
        engine,
        who,
        "decide",
        runId=run_id,
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision=decision,
        **extra,
    )
