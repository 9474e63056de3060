"""The counts behind the operations gauges: open runs, open work items, overdue steps (agent steps
too) and the outbox backlog, kept from the same index rows every write recomputes, and backfilled
when an older data folder is opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.notify import NotifyTarget
from engine.store.base import StoreCounts
from tests.engine.engine_support import MIRA, OPS, SCREENER, call, make_org, ok, publish, start
from tests.engine.store.old_schema import as_schema

pytestmark = pytest.mark.both_stores

CHAIN = """
---
name: chain
description: An agent step due in an hour, then an approval due in a day.
inputs:
  subject: string
steps:
  - id: prepare
    agent: Prepare the subject.
    due: 1h
    next: approve
  - id: approve
    person: finance-approver
    approve: Approve the subject.
    due: 1d
    next: done
  - id: done
    finish: approved
---
Prepare, then approve.
"""


async def test_counts_follow_runs_items_overdue_steps_and_unsent_notices(
    engine: Engine, clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine.org, "notify", (NotifyTarget("https://hooks.example.com/apc", ("overdue",)),))
    await publish(engine, tmp_path, CHAIN, {"finance-approver": "g_finance"})
    live = [(await start(engine, "chain", {"subject": str(n)}))["run"]["id"] for n in range(2)]
    await start(engine, "chain", {"subject": "t"}, mode="test")
    assert await engine.store.counts() == StoreCounts(3, 0, 0, 0)

    clock.advance(hours=2)
    await engine.tick()
    assert await engine.store.counts() == StoreCounts(3, 0, 3, 2), "agent steps overdue; operators told"

    claimed = ok(await call(engine, SCREENER, "claim", runId=live[0], stepId="prepare"), "claim")
    submitted = await call(engine, SCREENER, "submit", token=claimed["token"], output={}, summary="done")
    ok(submitted, "submit")
    assert await engine.store.counts() == StoreCounts(3, 1, 2, 2), "the approval is open, not yet overdue"

    ok(await call(engine, OPS, "cancel", runId=live[1], reason="duplicate"), "cancel")
    assert await engine.store.counts() == StoreCounts(2, 1, 1, 2), "a cancelled run's step is not overdue"


async def test_an_older_data_folder_gets_its_overdue_steps_counted(tmp_path: Path) -> None:
    data, clock = tmp_path / "data", ManualClock()
    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        await publish(engine, tmp_path, CHAIN, {"finance-approver": "g_finance"})
        await start(engine, "chain", {"subject": "a"}, who=MIRA)
        await start(engine, "chain", {"subject": "b"}, who=MIRA)
        clock.advance(hours=2)
        await engine.tick()
        before = await engine.store.counts()
    finally:
        await engine.close()
    assert before.overdue_steps == 2
    as_schema(data / "engine.db", 1)  # no overdue steps, no outbox: notifications, none delivered
    engine = await Engine.open(data, make_org(), clock=clock)
    try:
        assert await engine.store.counts() == before
    finally:
        await engine.close()
