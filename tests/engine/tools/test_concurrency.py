"""The server, not the client, resolves concurrent writes to one run (spec §6)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine.core import Engine
from tests.engine.engine_support import (
    MIRA,
    OMAR,
    OTHER_AGENT,
    SCREENER,
    THREE_AGENTS,
    call,
    decide,
    err,
    ok,
    publish,
    start,
)

pytestmark = pytest.mark.both_stores


async def test_fifty_concurrent_claims_give_exactly_one_token(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    agents = [SCREENER if n % 2 else OTHER_AGENT for n in range(50)]
    replies = await asyncio.gather(
        *(call(engine, who, "claim", runId=run_id, stepId="one") for who in agents)
    )
    winners = [(who, r) for who, r in zip(agents, replies, strict=True) if r["ok"]]
    assert len(winners) == 1
    winner, reply = winners[0]
    ok(reply, "claim")
    for who, r in zip(agents, replies, strict=True):
        if not r["ok"]:
            err(r, "conflict", ["claimed_by_you" if who == winner else "claimed_by_other"])


REVIEW_THEN_RECORD = """
---
name: review-then-record
description: Finance approves, then an agent records it.
steps:
  - id: review
    person: finance-approver
    approve: Approve.
  - id: record
    agent: Record the approval.
  - id: done
    finish: recorded
---
"""


async def test_twenty_concurrent_decides_give_one_success(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, REVIEW_THEN_RECORD, {"finance-approver": "g_finance"})
    view = await start(engine, "review-then-record", {})
    [item] = view["workItems"]
    people = [MIRA if n % 2 else OMAR for n in range(20)]
    replies = await asyncio.gather(
        *(decide(engine, who, view["run"]["id"], item, "approved") for who in people)
    )
    successes = [r for r in replies if r["ok"]]
    assert len(successes) == 1
    assert ok(successes[0], "decide")["steps"][1]["state"] == "ready"
    for reply in replies:
        if not reply["ok"]:
            err(reply, "conflict", ["already_decided"])
