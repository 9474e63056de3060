"""Rework through `on_reject` (spec §3.1): later completions to history, rewound steps null, the
rejecting approval's note kept current for the returned-to step to read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import (
    LENA,
    MIRA,
    OMAR,
    SCREENER,
    call,
    claim,
    decide,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores

REVIEWS = """
---
name: reviews
description: Prepare, then legal and finance approve; finance sends it back.
steps:
  - id: prepare
    agent: Prepare the contract.
    output: { revision: string }
  - id: legal
    person: legal
    approve: Legal terms.
  - id: finance
    person: finance
    approve: Pricing.
    on_reject: prepare
    due: 1d
  - id: done
    finish: signed
---
"""


async def _submit(engine: Engine, run_id: str, revision: str) -> dict[str, Any]:
    token = (await claim(engine, run_id, "prepare"))["token"]
    return ok(
        await call(engine, SCREENER, "submit", token=token, output={"revision": revision}, summary="s"),
        "submit",
    )


async def _decide(
    engine: Engine, view: dict[str, Any], who: Any, decision: str, **extra: Any
) -> dict[str, Any]:
    [item] = view["workItems"]
    return ok(await decide(engine, who, view["run"]["id"], item, decision, **extra), "decide")


async def test_rejection_moves_later_completions_to_history(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, REVIEWS, {"legal": "g_legal", "finance": "g_finance"})
    run_id = (await start(engine, "reviews", {}))["run"]["id"]
    view = await _submit(engine, run_id, "r1")

    clock.advance(60)
    view = await _decide(engine, view, LENA, "approved")
    clock.advance(60)
    view = await _decide(engine, view, MIRA, "rejected", note="Price too high.")
    assert step_states(view) == {"prepare": "ready", "legal": None, "finance": None, "done": None}
    steps = view["data"]["steps"]
    assert steps["legal"] == {
        "history": [{"decision": "approved", "by": "lena@example.com", "at": "2026-10-06T09:01:00Z"}]
    }
    assert steps["finance"] == {
        "decision": "rejected",
        "note": "Price too high.",
        "by": "mira@example.com",
        "at": "2026-10-06T09:02:00Z",
        "history": [],
    }
    claimed = await claim(engine, run_id, "prepare")
    assert claimed["data"]["steps"]["finance"]["note"] == "Price too high."
    clock.advance(60)
    view = ok(
        await call(
            engine, SCREENER, "submit", token=claimed["token"], output={"revision": "r2"}, summary="s"
        ),
        "submit",
    )
    assert view["data"]["steps"]["prepare"]["output"] == {"revision": "r2"}
    assert [h["output"] for h in view["data"]["steps"]["prepare"]["history"]] == [{"revision": "r1"}]
    view = await _decide(engine, view, LENA, "approved")
    assert step_states(view)["finance"] == "waiting"
    assert view["steps"][2]["due"] == "2026-10-07T09:03:00Z"
    view = await _decide(engine, view, OMAR, "approved")
    assert view["run"]["outcome"] == "signed"
    finance = view["data"]["steps"]["finance"]
    assert (finance["decision"], finance["by"], [h["decision"] for h in finance["history"]]) == (
        "approved",
        "omar@example.com",
        ["rejected"],
    )
    assert [h["decision"] for h in view["data"]["steps"]["legal"]["history"]] == ["approved"]
