"""The parallel profile: fork and join (profiles/parallel.md §3, §4).

The fork and the join each happen in one write; the parallel step records nothing in run data;
sibling completions (not claims) make an open snapshot stale; rework inside a branch touches no
sibling, rework from after the join rewinds the whole region; ending the run ends every branch.
"""

from __future__ import annotations

from typing import Any

from conform.expect import equal, equal_time, near, true
from conform.registry import check
from conform.session import Session, at_offset, states, step_entry, work_item


async def _forked(s: Session) -> tuple[str, dict[str, Any]]:
    run_id = str((await s.start("conform-fork", {"title": "T"}))["run"]["id"])
    return run_id, await s.work(run_id, "prepare", {"plan": "p"})


@check("parallel.fork", "parallel profile §3 Fork, §4")
async def fork(s: Session) -> None:
    """The write that reaches the parallel step makes every branch entry ready or waiting."""
    run_id, view = await _forked(s)
    equal(
        "states",
        states(view),
        {
            "prepare": "done",
            "split": "waiting",
            "build": "ready",
            "build_qa": None,
            "legal_check": "waiting",
            "review": None,
            "done": None,
        },
    )
    equal(
        "the parallel step",
        step_entry(view, "split"),
        {"id": "split", "kind": "parallel", "state": "waiting"},
    )
    equal("run state", view["run"]["state"], "active")
    equal("steps with run data", sorted(view["data"]["steps"]), ["prepare"])
    equal(
        "legal_check's due (from the fork)",
        work_item(view, "legal_check")["due"],
        near(at_offset(view["run"]["updatedAt"], 86400)),
    )
    equal(
        "agent work of the run",
        [i["stepId"] for i in await s.agent_items(s.agent, [run_id], "conform-fork")],
        ["build"],
    )
    people = [
        i["workItem"]["stepId"]
        for i in await s.everything(s.person1, "get_work", limit=100, process="conform-fork")
        if i["runId"] == run_id
    ]
    equal("the group's work of the run", people, ["legal_check"])


@check("parallel.snapshots", "parallel profile §3 Snapshots", covers=("decide/stale",))
async def snapshots(s: Session) -> None:
    """A sibling's completion makes an open snapshot stale; a sibling's claim does not."""
    run_id, _ = await _forked(s)
    item = work_item(await s.view(run_id, s.person1), "legal_check")
    decision = {"runId": run_id, "workItemId": item["id"], "decision": "completed", "output": {"fine": True}}
    claimed = await s.claim(run_id, "build")
    after_claim = work_item(await s.view(run_id, s.person1), "legal_check")["snapshot"]
    await s.submit(claimed["token"], {"artifact": "a1"})
    await s.refused(s.person1, "decide", "stale", snapshot=item["snapshot"], **decision)
    await s.refused(s.person1, "decide", "stale", snapshot=after_claim, **decision)
    fresh = work_item(await s.view(run_id, s.person1), "legal_check")["snapshot"]
    view = await s.ok(s.person1, "decide", snapshot=fresh, **decision)
    equal("states", (states(view)["split"], states(view)["legal_check"]), ("waiting", "done"))
    equal("legal_check's output", view["data"]["steps"]["legal_check"]["output"], {"fine": True})


@check("parallel.claim-keeps-snapshot", "parallel profile §3 Snapshots, core §3.4")
async def claim_keeps_snapshot(s: Session) -> None:
    run_id, _ = await _forked(s)
    item = work_item(await s.view(run_id, s.person1), "legal_check")
    await s.claim(run_id, "build")
    view = await s.ok(
        s.person1,
        "decide",
        runId=run_id,
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"fine": True},
    )
    equal("legal_check", states(view)["legal_check"], "done")


@check("parallel.join", "parallel profile §3 Join, Run state")
async def join(s: Session) -> None:
    """The last branch to join makes the parallel step done and its next ready, in the same write."""
    run_id, _ = await _forked(s)
    view = await s.work(run_id, "build", {"artifact": "a1"})
    equal("run state while a branch is ready", view["run"]["state"], "active")
    view = await s.work(run_id, "build_qa", {"passed": True}, s.agent2)
    equal(
        "split and the run with one branch joined",
        (states(view)["split"], view["run"]["state"]),
        ("waiting", "waiting"),
    )
    equal("build_qa's output", view["data"]["steps"]["build_qa"]["output"], {"passed": True})
    view = await s.decide(s.person1, await s.view(run_id), "legal_check", "completed", output={"fine": True})
    equal(
        "states after the join",
        states(view),
        {
            "prepare": "done",
            "split": "done",
            "build": "done",
            "build_qa": "done",
            "legal_check": "done",
            "review": "waiting",
            "done": None,
        },
    )
    equal("run state", view["run"]["state"], "waiting")
    true("split" not in view["data"]["steps"], "the parallel step recorded run data")
    equal("work items after the join", [w["stepId"] for w in view["workItems"]], ["review"])


@check("parallel.region-rework", "parallel profile §3 Rework (from after the join)")
async def region_rework(s: Session) -> None:
    run_id, view = await _forked(s)
    await s.decide(s.person1, view, "legal_check", "completed", output={"fine": True})
    await s.work(run_id, "build", {"artifact": "a1"})
    view = await s.work(run_id, "build_qa", {"passed": True})
    rejected = await s.decide(s.person2, view, "review", "rejected", note="Redo everything.")
    equal(
        "states",
        states(rejected),
        {
            "prepare": "done",
            "split": "waiting",
            "build": "ready",
            "build_qa": None,
            "legal_check": "waiting",
            "review": None,
            "done": None,
        },
    )
    steps = rejected["data"]["steps"]
    equal("prepare", (steps["prepare"]["output"], steps["prepare"]["history"]), ({"plan": "p"}, []))
    for step_id, output in (
        ("build", {"artifact": "a1"}),
        ("build_qa", {"passed": True}),
        ("legal_check", {"fine": True}),
    ):
        equal(f"{step_id} (rewound)", sorted(steps[step_id]), ["history"])
        equal(f"{step_id} history", [h["output"] for h in steps[step_id]["history"]], [output])
    review = steps["review"]
    equal(
        "the rejecting review",
        {k: v for k, v in review.items() if k != "at"},
        {"decision": "rejected", "note": "Redo everything.", "by": s.person2.value, "history": []},
    )
    true("split" not in steps, "the parallel step recorded run data")
    item = work_item(rejected, "legal_check")
    equal(
        "legal_check's fresh due and empty handoff",
        (item["due"], item["handoff"]),
        (near(at_offset(rejected["run"]["updatedAt"], 86400)), None),
    )
    equal("work items", [w["stepId"] for w in rejected["workItems"]], ["legal_check"])


@check("parallel.branch-rework", "parallel profile §3 Rework (inside a branch)")
async def branch_rework(s: Session) -> None:
    view = await s.start("conform-branch", {"title": "T"})
    run_id = view["run"]["id"]
    equal(
        "states at start",
        states(view),
        {"split": "waiting", "draft_a": "ready", "check_a": None, "write_b": "ready", "done": None},
    )
    await s.work(run_id, "write_b", {"b": "b1"})
    view = await s.work(run_id, "draft_a", {"a": "a1"})
    rejected = await s.decide(s.person1, view, "check_a", "rejected", note="Part A is wrong.")
    equal(
        "states",
        states(rejected),
        {"split": "waiting", "draft_a": "ready", "check_a": None, "write_b": "done", "done": None},
    )
    equal(
        "the sibling untouched",
        (rejected["data"]["steps"]["write_b"]["output"], rejected["data"]["steps"]["write_b"]["history"]),
        ({"b": "b1"}, []),
    )
    equal("check_a", rejected["data"]["steps"]["check_a"]["decision"], "rejected")
    view = await s.work(run_id, "draft_a", {"a": "a2"})
    done = await s.decide(s.person1, view, "check_a", "approved")
    equal("run", (done["run"]["state"], done["run"]["outcome"]), ("ended", "done"))
    equal(
        "states at the end",
        states(done),
        {"split": "done", "draft_a": "done", "check_a": "done", "write_b": "done", "done": "done"},
    )


@check(
    "parallel.cancel",
    "parallel profile §3 (terminal cleanup), core §3.5",
    covers=("submit/conflict:run_ended",),
)
async def cancel(s: Session) -> None:
    run_id, _ = await _forked(s)
    token = (await s.claim(run_id, "build"))["token"]
    cancelled = await s.ok(s.operator, "cancel", runId=run_id, reason="Incident closed elsewhere.")
    equal(
        "states",
        states(cancelled),
        {
            "prepare": "done",
            "split": "cancelled",
            "build": "cancelled",
            "build_qa": None,
            "legal_check": "cancelled",
            "review": None,
            "done": None,
        },
    )
    equal("work items", cancelled["workItems"], [])
    await s.refused(
        s.agent, "submit", "conflict", ["run_ended"], token=token, output={"artifact": "x"}, summary="Late."
    )
    people = [i for i in await s.everything(s.person1, "get_work", limit=100) if i["runId"] == run_id]
    equal("the group's work of the run", people, [])
    equal("agent work of the run", await s.agent_items(s.agent, [run_id]), [])


@check("parallel.branch-fails", "parallel profile §3 (ending the run from a branch)")
async def branch_fails(s: Session) -> None:
    run_id, view = await _forked(s)
    await s.claim(run_id, "build")
    failed = await s.decide(s.person1, view, "legal_check", "failed", note="Not legal at all.")
    equal("run", (failed["run"]["state"], failed["run"]["outcome"]), ("ended", "failed"))
    equal(
        "states",
        (states(failed)["legal_check"], states(failed)["build"], states(failed)["split"]),
        ("failed", "cancelled", "cancelled"),
    )
    equal_time("ended.at", failed["run"]["ended"]["at"], failed["run"]["updatedAt"])
