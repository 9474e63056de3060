"""Non-finite numbers never enter (spec §2.3: numbers are JSON numbers, and JSON has no NaN or
infinity): any argument holding one is `invalid`, naming where, before anything else is looked at.
Embedded callers reach the engine without JSON text in between, so the engine checks this itself; the
HTTP edge also checks the exactness of the text (tests/engine/http/test_exact_numbers.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.core import Engine
from tests.engine.engine_support import MIRA, OPS, SCREENER, call, claim, err, ok, publish, start

pytestmark = pytest.mark.both_stores

EVENTS = """
---
name: numbers
description: Hold for an event; an agent records figures.
inputs:
  amount: number
  extra: { type: object, optional: true }
steps:
  - id: figures
    agent: Record the figures.
    output:
      total: number
      details: object
      samples: { type: list, items: number }
  - id: paid
    wait_for: paid
  - id: done
    finish: done
---
"""

NON_FINITE = [math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("bad", NON_FINITE, ids=["nan", "inf", "-inf"])
async def test_a_non_finite_number_anywhere_in_the_arguments_is_invalid(
    engine: Engine, tmp_path: Path, bad: float
) -> None:
    await publish(engine, tmp_path, EVENTS)
    err(
        await call(engine, MIRA, "start_run", process="numbers", inputs={"amount": bad}),
        "invalid",
        ["inputs.amount: not a finite number"],
    )
    err(
        await call(
            engine, MIRA, "start_run", process="numbers", inputs={"amount": 1, "extra": {"a": [1, bad]}}
        ),
        "invalid",
        ["inputs.extra.a[1]: not a finite number"],
    )
    view = await start(engine, "numbers", {"amount": 1})
    run_id = view["run"]["id"]
    token = (await claim(engine, run_id, "figures"))["token"]
    reply = await call(
        engine,
        SCREENER,
        "submit",
        token=token,
        output={"total": bad, "details": {"rate": bad}, "samples": [1.5, bad]},
        summary="s",
    )
    err(
        reply,
        "invalid",
        [
            "output.total: not a finite number",
            "output.details.rate: not a finite number",
            "output.samples[1]: not a finite number",
        ],
    )
    err(
        await call(engine, OPS, "send_event", runId=run_id, name="paid", data={"amount": bad}),
        "invalid",
        ["data.amount: not a finite number"],
    )
    after = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert after["data"] == {"inputs": {"amount": 1}, "steps": {}}
    assert [s["state"] for s in after["steps"]] == ["claimed", None, None]


async def test_finite_numbers_come_back_as_given(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, EVENTS)
    view = await start(engine, "numbers", {"amount": 0.1, "extra": {"big": 10**20, "tiny": 5e-324}})
    assert view["data"]["inputs"] == {"amount": 0.1, "extra": {"big": 10**20, "tiny": 5e-324}}
