"""People (spec §3.4): work items, get_work for persons, decide and its error order, escalations."""

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
    OPS,
    OTHER_AGENT,
    SCREENER,
    THREE_AGENTS,
    WORK_ITEM_VALIDATOR,
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

APPROVAL = """
---
name: approval
description: A task, then an approval by finance.
inputs:
  owner: { type: person, optional: true }
steps:
  - id: prepare
    person: inputs.owner
    task: Prepare the pack.
    output: { pack: string }
    evidence: [link]
    next:
      - { to: review, when: Ready }
      - { to: done, when: Nothing to review }
  - id: review
    person: finance-approver
    approve: Approve the pack.
    due: 1d
  - id: done
    finish: approved
---
Body.
"""
BIND = {"finance-approver": "g_finance"}


async def _at_review(engine: Engine, tmp_path: Path, **extra: Any) -> dict[str, Any]:
    await publish(engine, tmp_path, APPROVAL, BIND)
    view = await start(engine, "approval", {"owner": LENA.id}, **extra)
    [item] = view["workItems"]
    reply = await decide(
        engine,
        LENA,
        view["run"]["id"],
        item,
        "completed",
        output={"pack": "P-1"},
        evidence=[{"kind": "link", "ref": "https://docs/p1"}],
        next="review",
        reason="Ready.",
    )
    return ok(reply, "decide")


async def test_a_person_step_opens_one_work_item_with_its_decide_call(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, APPROVAL, BIND)
    view = await start(engine, "approval", {"owner": LENA.id})
    [item] = view["workItems"]
    assert not list(WORK_ITEM_VALIDATOR.iter_errors(item))
    assert item == {
        "id": item["id"],
        "stepId": "prepare",
        "kind": "task",
        "text": "Prepare the pack.",
        "output": {"pack": "string"},
        "evidence": ["link"],
        "next": [{"to": "review", "when": "Ready"}, {"to": "done", "when": "Nothing to review"}],
        "assignedTo": {"person": "lena@example.com"},
        "snapshot": item["snapshot"],
        "due": None,
        "escalation": None,
        "handoff": None,
        "decide": {
            "tool": "decide",
            "arguments": {
                "runId": view["run"]["id"],
                "workItemId": item["id"],
                "snapshot": item["snapshot"],
                "requestId": "<new UUID>",
            },
            "decisions": ["completed", "failed"],
        },
    }
    assert view["run"]["state"] == "waiting"
    after = await _at_review(engine, tmp_path)
    [review] = after["workItems"]
    assert (review["kind"], review["output"], review["evidence"], review["next"]) == (
        "approve",
        None,
        None,
        None,
    )
    assert review["assignedTo"] == {"group": "g_finance"}
    assert review["due"] == "2026-10-07T09:00:00Z"
    assert review["decide"]["decisions"] == ["approved", "rejected", "failed"]
    assert after["data"]["steps"]["prepare"] == {
        "output": {"pack": "P-1"},
        "evidence": [{"kind": "link", "ref": "https://docs/p1"}],
        "next": "review",
        "reason": "Ready.",
        "by": "lena@example.com",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }


async def test_get_work_for_a_person_lists_items_assigned_to_them_or_their_groups(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    first = await _at_review(engine, tmp_path)
    clock.advance(60)
    second = await _at_review(engine, tmp_path, mode="test")
    for who in (MIRA, OMAR):
        page = ok(await call(engine, who, "get_work", limit=1), "get_work")
        [entry] = page["items"]
        assert {k: v for k, v in entry.items() if k != "workItem"} == {
            "runId": first["run"]["id"],
            "process": "approval",
            "version": 1,
            "mode": "live",
        }
        assert entry["workItem"] == first["workItems"][0]
        rest = ok(await call(engine, who, "get_work", cursor=page["nextCursor"]), "get_work")
        [test_entry] = rest["items"]
        assert (test_entry["runId"], test_entry["mode"], test_entry["workItem"]["mode"]) == (
            second["run"]["id"],
            "test",
            "test",
        )
        assert rest["nextCursor"] is None
    assert ok(await call(engine, LENA, "get_work"), "get_work")["items"] == []
    assert ok(await call(engine, OPS, "get_work"), "get_work")["items"] == []
    assert ok(await call(engine, MIRA, "get_work", process="other"), "get_work")["items"] == []


async def test_decide_errors_come_in_the_specified_order(engine: Engine, tmp_path: Path) -> None:
    view = await _at_review(engine, tmp_path)
    run_id = view["run"]["id"]
    [item] = view["workItems"]
    base = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
    err(await call(engine, SCREENER, "decide", **base, decision="approved"), "forbidden")
    err(await call(engine, LENA, "decide", **base, decision="approved"), "forbidden")
    err(await call(engine, MIRA, "decide", **{**base, "snapshot": "old"}, decision="approved"), "stale")
    err(
        await call(engine, MIRA, "decide", **{**base, "workItemId": "w_nope"}, decision="approved"),
        "not_found",
    )
    err(await call(engine, MIRA, "decide", **{**base, "runId": "r_nope"}, decision="approved"), "not_found")
    reply = await call(engine, MIRA, "decide", **base, decision="completed", output={})
    err(reply, "invalid", ["decision: completed not allowed here, one of approved, rejected, failed"])
    done = ok(await call(engine, MIRA, "decide", **base, decision="approved"), "decide")
    assert done["run"]["outcome"] == "approved"
    assert done["data"]["steps"]["review"] == {
        "decision": "approved",
        "by": "mira@example.com",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    err(await call(engine, OMAR, "decide", **base, decision="approved"), "conflict", ["run_ended"])


async def test_already_decided_is_reported_before_stale(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, APPROVAL, BIND)
    view = await start(engine, "approval", {"owner": LENA.id})
    [item] = view["workItems"]
    base = {"runId": view["run"]["id"], "workItemId": item["id"], "snapshot": item["snapshot"]}
    done = {
        "output": {"pack": "P"},
        "evidence": [{"kind": "link", "ref": "x"}],
        "next": "review",
        "reason": "r",
    }
    ok(await call(engine, LENA, "decide", **base, decision="completed", **done), "decide")
    again = await call(engine, LENA, "decide", **base, decision="completed", **done)
    err(again, "conflict", ["already_decided"])
    err(
        await call(engine, SCREENER, "decide", **base, decision="failed", note="n"),
        "conflict",
        ["already_decided"],
    )


async def test_fields_a_decision_does_not_take_are_invalid(engine: Engine, tmp_path: Path) -> None:
    view = await _at_review(engine, tmp_path)
    [item] = view["workItems"]
    base = {"runId": view["run"]["id"], "workItemId": item["id"], "snapshot": item["snapshot"]}
    reply = await call(
        engine, MIRA, "decide", **base, decision="approved", next="done", reason="r", output={}
    )
    err(
        reply,
        "invalid",
        [
            "output: not taken by decision approved",
            "next: not taken by decision approved",
            "reason: not taken by decision approved",
        ],
    )
    err(
        await call(engine, MIRA, "decide", **base, decision="rejected"),
        "invalid",
        ["note: required for decision rejected"],
    )
    reply = await call(engine, MIRA, "decide", **base, decision="completed", note="n")
    err(
        reply,
        "invalid",
        [
            "decision: completed not allowed here, one of approved, rejected, failed",
            "note: not taken by decision completed",
        ],
    )
    err(await call(engine, MIRA, "decide", **base, decision="maybe"), "invalid")


async def test_a_decisions_field_rules_come_after_the_item_checks(engine: Engine, tmp_path: Path) -> None:
    """tools.md `decide` orders run_ended .. forbidden, then `not_accepted`; the `invalid` rules on a
    decision's fields judge the decision on this item, so they sit with `not_accepted`, after forbidden."""
    view = await _at_review(engine, tmp_path)
    [item] = view["workItems"]
    base = {"runId": view["run"]["id"], "workItemId": item["id"], "snapshot": item["snapshot"]}
    err(await call(engine, LENA, "decide", **base, decision="rejected"), "forbidden")
    err(await call(engine, MIRA, "decide", **{**base, "snapshot": "old"}, decision="rejected"), "stale")
    err(
        await call(engine, MIRA, "decide", **{**base, "workItemId": "w_nope"}, decision="rejected"),
        "not_found",
    )
    err(
        await call(engine, MIRA, "decide", **base, decision="rejected", note=" "),
        "invalid",
        ["note: required for decision rejected"],
    )


async def test_a_task_completion_follows_submission_acceptance(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, APPROVAL, BIND)
    view = await start(engine, "approval", {"owner": LENA.id})
    [item] = view["workItems"]
    base = {"runId": view["run"]["id"], "workItemId": item["id"], "snapshot": item["snapshot"]}
    reply = await call(engine, LENA, "decide", **base, decision="completed", output={"pack": 3, "x": 1})
    err(
        reply,
        "not_accepted",
        [
            "output.pack: expected string",
            "output.x: not declared",
            "evidence: link required",
            "next: required, one of review, done",
            "reason: required",
        ],
    )
    after = ok(await call(engine, LENA, "get_run", runId=view["run"]["id"]), "get_run")
    assert after["workItems"] == view["workItems"]


async def test_a_person_path_that_resolves_to_nothing_fails_the_run(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, APPROVAL, BIND)
    view = await start(engine, "approval", {})
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "failed")
    note = "person inputs.owner resolves to no person in the organization"
    assert view["run"]["ended"] == {"by": "server", "at": "2026-10-06T09:00:00Z", "note": note}
    assert step_states(view) == {"prepare": "failed", "review": None, "done": None}
    assert view["data"]["steps"]["prepare"] == {
        "decision": "failed",
        "note": note,
        "by": "server",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    stranger = await start(engine, "approval", {"owner": "stranger@elsewhere.org"})
    assert stranger["run"]["outcome"] == "failed"


async def test_rejecting_an_approval_without_on_reject_ends_the_run_rejected(
    engine: Engine, tmp_path: Path
) -> None:
    view = await _at_review(engine, tmp_path)
    [item] = view["workItems"]
    reply = await decide(engine, OMAR, view["run"]["id"], item, "rejected", note="Pack incomplete.")
    done = ok(reply, "decide")
    assert (done["run"]["state"], done["run"]["outcome"]) == ("ended", "rejected")
    assert done["run"]["ended"] == {
        "by": "omar@example.com",
        "at": "2026-10-06T09:00:00Z",
        "note": "Pack incomplete.",
    }
    assert step_states(done) == {"prepare": "done", "review": "done", "done": None}


async def test_a_failed_decision_ends_the_run_failed(engine: Engine, tmp_path: Path) -> None:
    view = await _at_review(engine, tmp_path)
    [item] = view["workItems"]
    reply = await decide(engine, MIRA, view["run"]["id"], item, "failed", note="Fraud.")
    done = ok(reply, "decide")
    assert (done["run"]["outcome"], step_states(done)["review"]) == ("failed", "failed")
    assert done["data"]["steps"]["review"] == {
        "decision": "failed",
        "note": "Fraud.",
        "by": "mira@example.com",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }


async def _escalated(engine: Engine, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    view = ok(await call(engine, SCREENER, "escalate", token=token, note="Locked out."), "escalate")
    return run_id, view["workItems"][0]


async def test_an_escalation_returned_is_ready_again_with_the_note_in_the_handoff(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id, item = await _escalated(engine, tmp_path)
    clock.advance(120)
    base = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
    err(await call(engine, MIRA, "decide", **base, decision="returned", note="n"), "forbidden")
    err(await call(engine, OPS, "decide", **base, decision="approved"), "invalid")
    view = ok(
        await call(engine, OPS, "decide", **base, decision="returned", note="Unlocked; retry."), "decide"
    )
    assert step_states(view)["one"] == "ready"
    assert view["workItems"] == []
    returned = {
        "returned": {"note": "Unlocked; retry.", "by": "ops@example.com", "at": "2026-10-06T09:02:00Z"}
    }
    [work] = ok(await call(engine, OTHER_AGENT, "get_work"), "get_work")["items"]
    assert (work["handoff"], work["readySince"]) == (returned, "2026-10-06T09:02:00Z")
    assert (await claim(engine, run_id, "one", who=OTHER_AGENT))["handoff"] == returned
    err(
        await call(engine, OPS, "decide", **base, decision="returned", note="again"),
        "conflict",
        ["already_decided"],
    )


async def test_an_escalation_completed_or_failed_by_an_operator(engine: Engine, tmp_path: Path) -> None:
    run_id, item = await _escalated(engine, tmp_path)
    base = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
    err(
        await call(engine, OPS, "decide", **base, decision="completed", output={}),
        "not_accepted",
        ["output.note: missing"],
    )
    view = ok(
        await call(engine, OPS, "decide", **base, decision="completed", output={"note": "by hand"}), "decide"
    )
    assert view["data"]["steps"]["one"] == {
        "output": {"note": "by hand"},
        "by": "ops@example.com",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    assert step_states(view)["two"] == "ready"
    token = (await claim(engine, run_id, "two"))["token"]
    second = ok(await call(engine, SCREENER, "escalate", token=token, note="Again."), "escalate")[
        "workItems"
    ][0]
    reply = await decide(engine, OPS, run_id, second, "failed", note="Give up.")
    failed = ok(reply, "decide")
    assert (failed["run"]["outcome"], step_states(failed)) == (
        "failed",
        {"one": "done", "two": "failed", "three": None, "done": None},
    )


async def test_renew_and_escalate_are_for_agents_only(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}, who=MIRA))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    err(await call(engine, MIRA, "renew", token=token), "forbidden")
    err(await call(engine, OPS, "escalate", token=token, note="n"), "forbidden")
    err(await call(engine, MIRA, "send_event", runId=run_id, name="x"), "forbidden")
    assert ok(await call(engine, OPS, "send_event", runId=run_id, name="x"), "send_event") == {
        "consumedBy": None
    }
