"""The parallel profile (parallel-1): fork, join, branch rework, region rework, run end cancels siblings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.core import Engine
from engine.identity import Identity
from tests.engine.engine_support import (
    FIXTURES,
    LENA,
    MIRA,
    OMAR,
    OPS,
    SCREENER,
    call,
    claim,
    decide,
    err,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores

BIND = {"operations-lead": "g_finance", "security-lead": "g_finance", "communications-lead": "g_legal"}

BRANCHES = """
---
name: branches
description: Two branches, one with its own review.
steps:
  - id: fork
    parallel: [draft, scan]
    next: close
  - id: draft
    agent: Draft the notice.
    output: { text: string }
    next: check
  - id: check
    person: reviewer
    approve: Check the notice.
    on_reject: draft
    next: join
  - id: scan
    agent: Scan the systems.
    next: join
  - id: close
    agent: Close out.
  - id: done
    finish: done
---
"""


async def _decide(
    engine: Engine, view: dict[str, Any], step_id: str, who: Identity, decision: str, **extra: Any
) -> Any:
    item = next(i for i in view["workItems"] if i["stepId"] == step_id)
    return await decide(engine, who, view["run"]["id"], item, decision, **extra)


def _done(output_key: str) -> dict[str, Any]:
    return {"output": {output_key: "ok"}, "evidence": [{"kind": "link", "ref": "https://x"}]}


async def _forked(engine: Engine) -> dict[str, Any]:
    assert (await engine.publish(FIXTURES / "major-incident", BIND)).ok
    view = await start(engine, "major-incident", {"incidentId": "I-1", "commander": LENA.id})
    token = (await claim(engine, view["run"]["id"], "activate"))["token"]
    return ok(
        await call(engine, SCREENER, "submit", token=token, output={"bridge": "B-7"}, summary="s"), "submit"
    )


async def test_fork_makes_every_branch_ready_and_join_continues_after_the_last(engine: Engine) -> None:
    view = await _forked(engine)
    assert step_states(view) == {
        "activate": "done",
        "respond": "waiting",
        "operations": "waiting",
        "security": "waiting",
        "communications": "waiting",
        "close_review": None,
        "done": None,
    }
    assert [(i["stepId"], i["assignedTo"]) for i in view["workItems"]] == [
        ("operations", {"group": "g_finance"}),
        ("security", {"group": "g_finance"}),
        ("communications", {"group": "g_legal"}),
    ]
    assert [s.get("due") for s in view["steps"][2:5]] == ["2026-10-06T10:00:00Z"] * 3
    assert "respond" not in view["data"]["steps"]
    mira_items = ok(await call(engine, MIRA, "get_work"), "get_work")["items"]
    assert [i["workItem"]["stepId"] for i in mira_items] == ["operations", "security"]
    view = ok(
        await _decide(engine, view, "operations", MIRA, "completed", **_done("recoverySummary")), "decide"
    )
    ok(await _decide(engine, view, "security", OMAR, "completed", **_done("containmentSummary")), "decide")
    view = ok(await call(engine, OPS, "get_run", runId=view["run"]["id"]), "get_run")
    assert step_states(view)["respond"] == "waiting"
    view = ok(
        await _decide(engine, view, "communications", LENA, "completed", **_done("communicationsSummary")),
        "decide",
    )
    assert step_states(view)["respond"] == "done"
    assert step_states(view)["close_review"] == "waiting"
    [item] = view["workItems"]
    assert item["assignedTo"] == {"person": "lena@example.com"}


async def test_a_sibling_completion_makes_an_open_snapshot_stale(engine: Engine) -> None:
    view = await _forked(engine)
    ok(await _decide(engine, view, "operations", MIRA, "completed", **_done("recoverySummary")), "decide")
    err(await _decide(engine, view, "security", OMAR, "completed", **_done("containmentSummary")), "stale")


async def test_rework_from_after_the_join_reruns_the_whole_region(engine: Engine) -> None:
    view = await _forked(engine)
    for step_id, who, key in (
        ("operations", MIRA, "recoverySummary"),
        ("security", OMAR, "containmentSummary"),
        ("communications", LENA, "communicationsSummary"),
    ):
        view = ok(await _decide(engine, view, step_id, who, "completed", **_done(key)), "decide")
    view = ok(
        await _decide(engine, view, "close_review", LENA, "rejected", note="Security evidence missing."),
        "decide",
    )
    assert step_states(view) == {
        "activate": "done",
        "respond": "waiting",
        "operations": "waiting",
        "security": "waiting",
        "communications": "waiting",
        "close_review": None,
        "done": None,
    }
    steps = view["data"]["steps"]
    assert [k for k in steps["operations"]] == ["history"]
    assert [h["output"] for h in steps["security"]["history"]] == [{"containmentSummary": "ok"}]
    assert (steps["close_review"]["decision"], steps["close_review"]["note"]) == (
        "rejected",
        "Security evidence missing.",
    )
    assert steps["activate"]["history"] == []
    assert len(view["workItems"]) == 3


async def test_rework_inside_a_branch_touches_no_sibling(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, BRANCHES, {"reviewer": "g_finance"})
    view = await start(engine, "branches", {})
    run_id = view["run"]["id"]
    assert step_states(view) == {
        "fork": "waiting",
        "draft": "ready",
        "check": None,
        "scan": "ready",
        "close": None,
        "done": None,
    }
    work = ok(await call(engine, SCREENER, "get_work"), "get_work")["items"]
    assert [i["stepId"] for i in work] == ["draft", "scan"]
    scan = (await claim(engine, run_id, "scan"))["token"]
    ok(await call(engine, SCREENER, "submit", token=scan, output={}, summary="scanned"), "submit")
    draft = (await claim(engine, run_id, "draft"))["token"]
    view = ok(
        await call(engine, SCREENER, "submit", token=draft, output={"text": "v1"}, summary="drafted"),
        "submit",
    )
    view = ok(await _decide(engine, view, "check", MIRA, "rejected", note="Too long."), "decide")
    assert step_states(view) == {
        "fork": "waiting",
        "draft": "ready",
        "check": None,
        "scan": "done",
        "close": None,
        "done": None,
    }
    assert view["data"]["steps"]["scan"]["summary"] == "scanned"
    assert view["data"]["steps"]["check"]["note"] == "Too long."
    draft = (await claim(engine, run_id, "draft"))["token"]
    view = ok(
        await call(engine, SCREENER, "submit", token=draft, output={"text": "v2"}, summary="shorter"),
        "submit",
    )
    view = ok(await _decide(engine, view, "check", OMAR, "approved"), "decide")
    assert step_states(view)["fork"] == "done"
    assert step_states(view)["close"] == "ready"


async def test_a_run_ended_in_one_branch_cancels_every_sibling(engine: Engine) -> None:
    view = await _forked(engine)
    view = ok(
        await _decide(engine, view, "security", OMAR, "failed", note="Breach confirmed; escalate to crisis."),
        "decide",
    )
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "failed")
    assert step_states(view) == {
        "activate": "done",
        "respond": "cancelled",
        "operations": "cancelled",
        "security": "failed",
        "communications": "cancelled",
        "close_review": None,
        "done": None,
    }
    assert view["workItems"] == []
    assert ok(await call(engine, MIRA, "get_work"), "get_work")["items"] == []
