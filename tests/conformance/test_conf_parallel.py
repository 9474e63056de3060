"""The parallel profile (profiles/parallel.md §3, §4).

Fork in one write, join in one write, the parallel step recording nothing in run data, sibling
completions (not claims) making open snapshots stale, rework inside a branch touching no sibling,
rework from after the join rewinding the whole region, and terminal cleanup across branches.
"""

from __future__ import annotations

from typing import Any

from tests.conformance.conformance_support import (
    AGENT,
    AGENT2,
    FIN1,
    FORK,
    FORK_BIND,
    LEGAL,
    OPS,
    VENDOR_BIND,
    Server,
    states,
    step_entry,
    work_item,
)

BRANCH_REWORK = """
---
name: branch-rework
description: Two branches, one with its own approval that can send it back.
inputs:
  title: string
steps:
  - id: split
    parallel: [draft_a, write_b]
    next: done
  - id: draft_a
    agent: Draft part A.
    output: { a: string }
    next: check_a
  - id: check_a
    person: finance-approver
    approve: Check part A.
    on_reject: draft_a
    next: join
  - id: write_b
    agent: Write part B.
    output: { b: string }
    next: join
  - id: done
    finish: done
---

Branch rework.
"""


async def _submit(server: Server, run_id: str, step_id: str, output: dict[str, Any], who: Any = AGENT) -> Any:
    claimed = await server.claim(run_id, step_id, who=who)
    return await server.ok(who, "submit", token=claimed["token"], output=output, summary=f"Did {step_id}.")


async def _forked(server: Server) -> tuple[str, dict[str, Any]]:
    await server.publish(FORK, FORK_BIND)
    run_id = (await server.start("fork-join", {"title": "T"}))["run"]["id"]
    server.clock.advance(minutes=10)
    return run_id, await _submit(server, run_id, "prepare", {"plan": "p"})


async def test_the_fork_happens_in_the_write_that_reaches_the_parallel_step(server: Server) -> None:
    run_id, view = await _forked(server)
    assert states(view) == {
        "prepare": "done",
        "split": "waiting",
        "build": "ready",
        "build_qa": None,
        "legal_check": "waiting",
        "review": None,
        "done": None,
    }
    assert step_entry(view, "split") == {"id": "split", "kind": "parallel", "state": "waiting"}
    assert view["run"]["state"] == "active"
    assert set(view["data"]["steps"]) == {"prepare"}
    assert work_item(view, "legal_check")["due"] == "2026-10-07T09:10:00Z"
    assert [(i["runId"], i["stepId"]) for i in (await server.ok(AGENT, "get_work"))["items"]] == [
        (run_id, "build")
    ]
    assert [i["workItem"]["stepId"] for i in (await server.ok(LEGAL, "get_work"))["items"]] == ["legal_check"]


async def test_sibling_completions_stale_an_open_snapshot_but_claims_do_not(server: Server) -> None:
    run_id, view = await _forked(server)
    item = work_item(await server.view(run_id, LEGAL), "legal_check")
    decision = {
        "runId": run_id,
        "workItemId": item["id"],
        "decision": "completed",
        "output": {"fine": True},
    }
    claimed = await server.claim(run_id, "build")
    after_claim = await server.view(run_id, LEGAL)
    await server.ok(AGENT, "submit", token=claimed["token"], output={"artifact": "a1"}, summary="Built.")
    await server.refused(LEGAL, "decide", "stale", snapshot=item["snapshot"], **decision)
    await server.refused(
        LEGAL, "decide", "stale", snapshot=work_item(after_claim, "legal_check")["snapshot"], **decision
    )
    fresh = work_item(await server.view(run_id, LEGAL), "legal_check")["snapshot"]
    view = await server.ok(LEGAL, "decide", snapshot=fresh, **decision)
    assert states(view)["split"] == "waiting" and states(view)["legal_check"] == "done"
    assert view["data"]["steps"]["legal_check"]["output"] == {"fine": True}


async def test_a_claim_elsewhere_leaves_an_open_snapshot_current(server: Server) -> None:
    run_id, view = await _forked(server)
    item = work_item(await server.view(run_id, LEGAL), "legal_check")
    await server.claim(run_id, "build")
    view = await server.ok(
        LEGAL,
        "decide",
        runId=run_id,
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"fine": True},
    )
    assert states(view)["legal_check"] == "done"


async def test_the_last_branch_joins_and_next_is_ready_in_the_same_write(server: Server) -> None:
    run_id, view = await _forked(server)
    view = await _submit(server, run_id, "build", {"artifact": "a1"})
    assert view["run"]["state"] == "active"
    view = await _submit(server, run_id, "build_qa", {"passed": True}, who=AGENT2)
    assert states(view)["split"] == "waiting"
    assert view["run"]["state"] == "waiting"
    assert view["data"]["steps"]["build_qa"]["output"] == {"passed": True}
    view = await server.decide(
        LEGAL, await server.view(run_id), "legal_check", "completed", output={"fine": True}
    )
    assert states(view) == {
        "prepare": "done",
        "split": "done",
        "build": "done",
        "build_qa": "done",
        "legal_check": "done",
        "review": "waiting",
        "done": None,
    }
    assert view["run"]["state"] == "waiting"
    assert "split" not in view["data"]["steps"]
    assert [w["stepId"] for w in view["workItems"]] == ["review"]


async def test_rework_from_after_the_join_rewinds_the_whole_region(server: Server) -> None:
    run_id, view = await _forked(server)
    await server.decide(LEGAL, view, "legal_check", "completed", output={"fine": True})
    await _submit(server, run_id, "build", {"artifact": "a1"})
    view = await _submit(server, run_id, "build_qa", {"passed": True})
    server.clock.advance(hours=2)
    rejected = await server.decide(FIN1, view, "review", "rejected", note="Redo everything.")
    assert states(rejected) == {
        "prepare": "done",
        "split": "waiting",
        "build": "ready",
        "build_qa": None,
        "legal_check": "waiting",
        "review": None,
        "done": None,
    }
    steps = rejected["data"]["steps"]
    assert steps["prepare"]["output"] == {"plan": "p"} and steps["prepare"]["history"] == []
    for step_id, output in (
        ("build", {"artifact": "a1"}),
        ("build_qa", {"passed": True}),
        ("legal_check", {"fine": True}),
    ):
        assert set(steps[step_id]) == {"history"}, steps[step_id]
        assert [h["output"] for h in steps[step_id]["history"]] == [output]
    assert steps["review"] == {
        "decision": "rejected",
        "note": "Redo everything.",
        "by": FIN1.id,
        "at": "2026-10-06T11:10:00Z",
        "history": [],
    }
    assert "split" not in steps
    item = work_item(rejected, "legal_check")
    assert item["due"] == "2026-10-07T11:10:00Z"
    assert item["handoff"] is None
    assert [w["stepId"] for w in rejected["workItems"]] == ["legal_check"]


async def test_rework_inside_a_branch_touches_no_sibling(server: Server) -> None:
    await server.publish(BRANCH_REWORK, VENDOR_BIND)
    view = await server.start("branch-rework", {"title": "T"})
    run_id = view["run"]["id"]
    assert states(view) == {
        "split": "waiting",
        "draft_a": "ready",
        "check_a": None,
        "write_b": "ready",
        "done": None,
    }
    await _submit(server, run_id, "write_b", {"b": "b1"})
    view = await _submit(server, run_id, "draft_a", {"a": "a1"})
    rejected = await server.decide(FIN1, view, "check_a", "rejected", note="Part A is wrong.")
    assert states(rejected) == {
        "split": "waiting",
        "draft_a": "ready",
        "check_a": None,
        "write_b": "done",
        "done": None,
    }
    assert rejected["data"]["steps"]["write_b"]["output"] == {"b": "b1"}
    assert rejected["data"]["steps"]["write_b"]["history"] == []
    assert rejected["data"]["steps"]["check_a"]["decision"] == "rejected"
    view = await _submit(server, run_id, "draft_a", {"a": "a2"})
    done = await server.decide(FIN1, view, "check_a", "approved")
    assert (done["run"]["state"], done["run"]["outcome"]) == ("ended", "done")
    assert states(done) == {
        "split": "done",
        "draft_a": "done",
        "check_a": "done",
        "write_b": "done",
        "done": "done",
    }


async def test_ending_the_run_cancels_every_branch_and_stops_their_tokens(server: Server) -> None:
    run_id, _ = await _forked(server)
    token = (await server.claim(run_id, "build"))["token"]
    cancelled = await server.ok(OPS, "cancel", runId=run_id, reason="Incident closed elsewhere.")
    assert states(cancelled) == {
        "prepare": "done",
        "split": "cancelled",
        "build": "cancelled",
        "build_qa": None,
        "legal_check": "cancelled",
        "review": None,
        "done": None,
    }
    assert cancelled["workItems"] == []
    await server.refused(
        AGENT, "submit", "conflict", ["run_ended"], token=token, output={"artifact": "x"}, summary="Late."
    )
    assert (await server.ok(LEGAL, "get_work"))["items"] == []
    assert (await server.ok(AGENT, "get_work"))["items"] == []


async def test_a_failed_branch_decision_ends_the_run(server: Server) -> None:
    run_id, view = await _forked(server)
    await server.claim(run_id, "build")
    failed = await server.decide(LEGAL, view, "legal_check", "failed", note="Not legal at all.")
    assert (failed["run"]["state"], failed["run"]["outcome"]) == ("ended", "failed")
    assert states(failed)["legal_check"] == "failed"
    assert states(failed)["build"] == "cancelled"
    assert states(failed)["split"] == "cancelled"
