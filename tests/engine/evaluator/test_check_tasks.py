"""A person's ordinary task is checked like an agent's submission (check profile §3); an escalated
task the check was unsure of goes to the operators and back to its assignee when returned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator import YesNo
from tests.engine.engine_support import (
    MIRA,
    OMAR,
    OPS,
    WORK_ITEM_VALIDATOR,
    call,
    err,
    ok,
    publish,
    start,
    step_states,
)
from tests.engine.evaluator.engine_check_support import Judge, checked_engine, verdict

pytestmark = pytest.mark.both_stores

PACK = """
---
name: pack
description: Finance prepares a pack, which a model checks.
inputs:
  ticket: string
steps:
  - id: prepare
    person: finance-approver
    task: Prepare the pack.
    output: { pack: string }
    check:
      - ask: The pack lists every invoice.
        pass: 0.9
        fail: 0.5
    next: done
  - id: done
    finish: finished
---

Packs.
"""
ASK = "The pack lists every invoice."


@pytest.fixture
async def engine_with(tmp_path: Path, clock: ManualClock) -> Any:
    judge = Judge()
    async with checked_engine(tmp_path, clock, judge) as engine:
        await publish(engine, tmp_path, PACK, {"finance-approver": "g_finance"})
        yield engine, judge


async def my_item(engine: Engine) -> dict[str, Any]:
    [entry] = ok(await call(engine, MIRA, "get_work"), "get_work")["items"]
    return entry["workItem"]


async def complete(engine: Engine, who: Any, item: dict[str, Any], **extra: Any) -> dict[str, Any]:
    args = {k: v for k, v in item["decide"]["arguments"].items() if k != "requestId"}
    return await call(engine, who, "decide", decision="completed", **args, **extra)


def one(kind: str, p: float, result: str) -> dict[str, Any]:
    return verdict(kind, [(ASK, "yes_no", p, None, result)])


async def test_a_failed_check_refuses_the_persons_task_and_the_item_shows_why(engine_with: Any) -> None:
    engine, judge = engine_with
    judge.script = {ASK: [YesNo(0.2), YesNo(0.95)]}
    await start(engine, "pack", {"ticket": "T-1"}, who=MIRA)
    item = await my_item(engine)
    lines = [f"check: {ASK} → no (0.2)"]
    err(await complete(engine, MIRA, item, output={"pack": "Invoices 1-3."}), "not_accepted", lines)
    again = await my_item(engine)
    assert again["handoff"] == {"issues": lines, "check": one("fail", 0.2, "fail")}
    assert again["snapshot"] == item["snapshot"]
    done = ok(await complete(engine, OMAR, item, output={"pack": "Invoices 1-4."}), "decide")
    assert (done["run"]["outcome"], done["data"]["steps"]["prepare"]["check"]) == (
        "finished",
        one("pass", 0.95, "pass"),
    )
    assert done["data"]["steps"]["prepare"]["by"] == OMAR.id


async def test_an_unsure_task_goes_to_the_operators_and_returns_to_its_assignee(engine_with: Any) -> None:
    engine, judge = engine_with
    judge.script = {ASK: [YesNo(0.7), YesNo(0.95)]}
    run_id = (await start(engine, "pack", {"ticket": "T-1"}, who=MIRA))["run"]["id"]
    item = await my_item(engine)
    view = ok(await complete(engine, MIRA, item, output={"pack": "Invoices 1-3."}), "decide")
    [escalated] = view["workItems"]
    assert [e.message for e in WORK_ITEM_VALIDATOR.iter_errors(escalated)] == []
    assert (escalated["kind"], escalated["assignedTo"], escalated["decide"]["decisions"]) == (
        "task",
        {"group": "operators"},
        ["returned", "completed", "failed"],
    )
    assert escalated["escalation"]["candidate"] == {
        "output": {"pack": "Invoices 1-3."},
        "by": MIRA.id,
        "at": "2026-10-06T09:00:00Z",
    }
    assert ok(await call(engine, MIRA, "get_work"), "get_work")["items"] == []
    err(await complete(engine, MIRA, escalated), "forbidden")

    args = {k: v for k, v in escalated["decide"]["arguments"].items() if k != "requestId"}
    returned = ok(
        await call(engine, OPS, "decide", decision="returned", note="Add invoice 4.", **args), "decide"
    )
    assert step_states(returned)["prepare"] == "waiting"
    back = await my_item(engine)
    assert (back["kind"], back["assignedTo"], back["decide"]["decisions"]) == (
        "task",
        {"group": "g_finance"},
        ["completed", "failed"],
    )
    assert back["handoff"] == {
        "returned": {"note": "Add invoice 4.", "by": OPS.id, "at": "2026-10-06T09:00:00Z"},
        "issues": [f"check: {ASK} → no (0.7)"],
        "check": one("unsure", 0.7, "unsure"),
    }
    done = ok(await complete(engine, MIRA, back, output={"pack": "Invoices 1-4."}), "decide")
    assert done["data"]["steps"]["prepare"]["check"] == one("pass", 0.95, "pass")
    assert len(judge.requests) == 2
    assert run_id == done["run"]["id"]


async def test_an_operator_completing_an_unsure_task_is_not_checked_again(engine_with: Any) -> None:
    engine, judge = engine_with
    judge.script = {ASK: [YesNo(0.7)]}
    await start(engine, "pack", {"ticket": "T-1"}, who=MIRA)
    view = ok(await complete(engine, MIRA, await my_item(engine), output={"pack": "Invoices 1-3."}), "decide")
    done = ok(await complete(engine, OPS, view["workItems"][0], output={"pack": "Invoices 1-4."}), "decide")
    assert done["data"]["steps"]["prepare"] == {
        "output": {"pack": "Invoices 1-4."},
        "check": one("unsure", 0.7, "unsure"),
        "by": OPS.id,
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    assert len(judge.requests) == 1
