"""The evaluator is asked outside the write lock (engine/tools/checking.py): other writes go on while
it answers, and the submission is checked again before its verdict is applied."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator import YesNo
from tests.engine.engine_support import (
    MIRA,
    OPS,
    OTHER_AGENT,
    SCREENER,
    call,
    claim,
    err,
    ok,
    publish,
    start,
    step_states,
)
from tests.engine.evaluator.engine_check_support import (
    Judge,
    checked,
    checked_engine,
    judge,
    screening,
    submit,
)

pytestmark = pytest.mark.both_stores

__all__ = ["checked", "judge"]


async def while_evaluating(judge: Judge, write: Any) -> tuple[asyncio.Task[dict[str, Any]], asyncio.Event]:
    """Start `write` and return once the evaluator holds it; set the returned event to let it answer."""
    judge.gate = asyncio.Event()
    task = asyncio.create_task(write)
    await asyncio.wait_for(judge.asked.wait(), timeout=5)
    return task, judge.gate


async def asked(judge: Judge, count: int) -> None:
    """Until the evaluator has been asked `count` questions (each pass yields to the other task)."""
    while judge.calls() < count:
        await asyncio.sleep(0)


async def test_other_writes_complete_while_a_check_is_being_answered(checked: Engine, judge: Judge) -> None:
    screen = await screening(checked)
    other = await screening(checked, vendor="Globex")
    task, gate = await while_evaluating(judge, submit(checked, screen))
    renewed = ok(await call(checked, SCREENER, "renew", token=other.token, progress="Half done."), "renew")
    started = await start(checked, "vendor-check", {"vendorName": "Initech", "amount": 10}, who=MIRA)
    assert not task.done()
    gate.set()
    view = ok(await task, "submit")
    assert step_states(view)["check_vendor"] == "done"
    assert renewed["token"] != other.token
    assert started["run"]["state"] == "active"


async def test_a_lease_that_lapsed_and_was_claimed_again_meanwhile_makes_the_submit_stale(
    checked: Engine, judge: Judge, clock: ManualClock
) -> None:
    screen = await screening(checked)
    task, gate = await while_evaluating(judge, submit(checked, screen))
    clock.advance(seconds=601)
    claimed = ok(
        await call(checked, OTHER_AGENT, "claim", runId=screen.run_id, stepId="check_vendor"), "claim"
    )
    gate.set()
    err(await task, "stale")
    view = ok(await call(checked, OPS, "get_run", runId=screen.run_id), "get_run")
    assert step_states(view)["check_vendor"] == "claimed"
    assert view["data"]["steps"] == {}
    assert claimed["handoff"] is None


async def test_a_renew_meanwhile_makes_the_old_tokens_submit_stale(checked: Engine, judge: Judge) -> None:
    screen = await screening(checked)
    task, gate = await while_evaluating(judge, submit(checked, screen))
    ok(await call(checked, SCREENER, "renew", token=screen.token), "renew")
    gate.set()
    err(await task, "stale")


async def test_a_run_cancelled_meanwhile_is_run_ended(checked: Engine, judge: Judge) -> None:
    screen = await screening(checked)
    task, gate = await while_evaluating(judge, submit(checked, screen))
    ok(await call(checked, OPS, "cancel", runId=screen.run_id, reason="Vendor withdrew."), "cancel")
    gate.set()
    err(await task, "conflict", ["run_ended"])


async def test_the_same_request_sent_twice_meanwhile_is_applied_once(checked: Engine, judge: Judge) -> None:
    screen = await screening(checked)
    judge.gate = asyncio.Event()
    first = asyncio.create_task(submit(checked, screen, requestId="req-twice"))
    second = asyncio.create_task(submit(checked, screen, requestId="req-twice"))
    await asyncio.wait_for(asked(judge, 6), timeout=5)
    judge.gate.set()
    views = [ok(await first, "submit"), ok(await second, "submit")]
    assert views[0] == views[1]
    assert step_states(views[0])["check_vendor"] == "done"


FORK = """
---
name: fork
description: A checked finance task beside an agent branch.
inputs:
  ticket: string
steps:
  - id: both
    parallel: [prepare, note]
    next: done
  - id: prepare
    person: finance-approver
    task: Prepare the pack.
    output: { pack: string }
    check: The pack lists every invoice.
    next: join
  - id: note
    agent: Write a note.
    output: { note: string }
    next: join
  - id: done
    finish: finished
---

Fork.
"""


async def test_a_decision_whose_run_data_changed_meanwhile_is_stale(
    tmp_path: Path, clock: ManualClock
) -> None:
    judge = Judge(script={"The pack lists every invoice.": [YesNo(0.95)]})
    async with checked_engine(tmp_path, clock, judge) as engine:
        await publish(engine, tmp_path, FORK, {"finance-approver": "g_finance"})
        run_id = (await start(engine, "fork", {"ticket": "T-1"}, who=MIRA))["run"]["id"]
        [entry] = ok(await call(engine, MIRA, "get_work"), "get_work")["items"]
        args = {k: v for k, v in entry["workItem"]["decide"]["arguments"].items() if k != "requestId"}
        decision = call(
            engine, MIRA, "decide", decision="completed", output={"pack": "Invoices 1-4."}, **args
        )
        task, gate = await while_evaluating(judge, decision)
        claimed = await claim(engine, run_id, "note")
        ok(
            await call(engine, SCREENER, "submit", token=claimed["token"], output={"note": "n"}, summary="s"),
            "submit",
        )
        gate.set()
        err(await task, "stale")
        view = ok(await call(engine, OPS, "get_run", runId=run_id), "get_run")
    assert step_states(view)["prepare"] == "waiting"
    assert list(view["data"]["steps"]) == ["note"]
