"""What decide refuses, and in which order: a person's call on a work item that ended, was decided,
never existed, moved on, is not theirs, or takes fields its decision does not (spec §3.4, §6 rule 4;
tools.md decide).

decide's errors come in one order: `run_ended`, `already_decided`, `not_found`, `stale`, `forbidden`,
`not_accepted`. Each precedence check sets up a call for which two neighbours apply and expects the
earlier one.
"""

from __future__ import annotations

from typing import Any

from conform.checks.common import desk_at_fix, vendor_at_approval
from conform.expect import equal, true
from conform.registry import check
from conform.session import Session, states, work_item


@check(
    "people.run-ended-first",
    "tools.md decide (errors in order)",
    covers=("decide/conflict:run_ended", "decide/precedence:run_ended>already_decided"),
)
async def run_ended_first(s: Session) -> None:
    """An item decided in the write that ended the run: a second decision is `run_ended`."""
    view = await vendor_at_approval(s)
    await s.decide(s.person1, view, "approve", "approved")
    item = work_item(view, "approve")
    await s.refused(
        s.person2,
        "decide",
        "conflict",
        ["run_ended"],
        runId=view["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="approved",
    )


@check(
    "people.already-decided",
    "spec §3.4 (already_decided before the snapshot); tools.md decide",
    covers=(
        "decide/conflict:already_decided",
        "decide/precedence:already_decided>not_found",
        "decide/precedence:already_decided>stale",
        "decide/precedence:already_decided>forbidden",
    ),
)
async def already_decided(s: Session) -> None:
    """A decided item is `already_decided` for everyone: not gone (`not_found`), not `stale` though
    run data changed since, and before asking whether the caller may decide at all."""
    view = await vendor_at_approval(s)
    run_id = view["run"]["id"]
    item = work_item(view, "approve")
    await s.decide(s.person1, view, "approve", "rejected", note="Check the aliases too.")
    equal("check_vendor after the rejection", states(await s.view(run_id))["check_vendor"], "ready")
    for who in (s.person2, s.outsider, s.agent):
        await s.refused(
            who,
            "decide",
            "conflict",
            ["already_decided"],
            runId=run_id,
            workItemId=item["id"],
            snapshot=item["snapshot"],
            decision="approved",
        )


@check(
    "people.not-found", "tools.md decide", covers=("decide/not_found", "decide/precedence:not_found>stale")
)
async def not_found(s: Session) -> None:
    """An item that never existed on this run (or at all) is `not_found`, whatever the snapshot."""
    view = await vendor_at_approval(s)
    other = await vendor_at_approval(s)
    foreign = work_item(other, "approve")["id"]
    for item_id in ("w_conform_never", foreign):
        await s.refused(
            s.person1,
            "decide",
            "not_found",
            runId=view["run"]["id"],
            workItemId=item_id,
            snapshot="not-a-snapshot",
            decision="approved",
        )
    await s.refused(
        s.person1,
        "decide",
        "not_found",
        runId="r_conform_no_such_run",
        workItemId=foreign,
        snapshot="x",
        decision="approved",
    )


@check(
    "people.stale",
    "spec §3.4 (snapshots), §6 rule 4",
    covers=("decide/stale", "decide/precedence:stale>forbidden"),
)
async def stale(s: Session) -> None:
    """A snapshot that is not current is `stale`, checked before whether the caller may decide."""
    view = await vendor_at_approval(s)
    item = work_item(view, "approve")
    for who in (s.outsider, s.operator, s.agent, s.person1):
        await s.refused(
            who,
            "decide",
            "stale",
            runId=view["run"]["id"],
            workItemId=item["id"],
            snapshot=item["snapshot"] + "0",
            decision="approved",
        )


@check(
    "people.forbidden",
    "spec §6 rule 4; tools.md decide",
    covers=("decide/forbidden", "decide/precedence:forbidden>not_accepted"),
)
async def forbidden(s: Session) -> None:
    """Only a person in the assignment decides, checked before the submission itself."""
    memo = await s.start("conform-memo", {"topic": "Leases"})
    item = work_item(memo, "write")
    arguments = {
        "runId": memo["run"]["id"],
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "completed",
        "output": {"memo": 5},
    }
    for who in (s.outsider, s.operator, s.agent):
        await s.refused(who, "decide", "forbidden", **arguments)
    await s.refused(s.person1, "decide", "not_accepted", ["output.memo: expected string"], **arguments)
    equal("run after the refusals", await s.view(memo["run"]["id"]), memo)


@check("people.person-assignment", "spec §2.2 person, §3.4", covers=("decide/forbidden",))
async def person_assignment(s: Session) -> None:
    """An item assigned to one person is theirs alone: group members and operators are refused."""
    view = await desk_at_fix(s)
    item = work_item(view, "fix")
    for who in (s.person2, s.operator):
        await s.refused(
            who,
            "decide",
            "forbidden",
            runId=view["run"]["id"],
            workItemId=item["id"],
            snapshot=item["snapshot"],
            decision="failed",
            note="x",
        )


@check("people.snapshots", 'spec §3.4 (snapshot); tools.md "Run view"')
async def snapshots(s: Session) -> None:
    """A held event is not run data, so it leaves a snapshot current; a completion changes it."""
    view = await desk_at_fix(s)
    fix = work_item(view, "fix")
    await s.ok(s.agent, "send_event", runId=view["run"]["id"], name="unrelated")
    after = await s.decide(
        s.person1,
        view,
        "fix",
        "completed",
        output={"fixed": True},
        evidence=[{"kind": "link", "ref": "PR-7"}],
        next="confirm",
        reason="Merged.",
    )
    confirm = work_item(after, "confirm")
    true(confirm["snapshot"] != fix["snapshot"], "the snapshot did not change when run data did")
    equal("confirm's decide snapshot", confirm["decide"]["arguments"]["snapshot"], confirm["snapshot"])


@check(
    "people.decide-fields", "tools.md decide (fields a decision does not take)", covers=("decide/invalid",)
)
async def decide_fields(s: Session) -> None:
    """next/reason off `completed`, note with `completed`, output/evidence/summary off `completed`,
    and a decision the item does not list: each `invalid`, and nothing changes."""
    view = await vendor_at_approval(s)
    item = work_item(view, "approve")
    base = {"runId": view["run"]["id"], "workItemId": item["id"], "snapshot": item["snapshot"]}
    cases: list[tuple[str, dict[str, Any]]] = [
        ("approved", {"next": "done", "reason": "Fine."}),
        ("rejected", {"note": "No.", "reason": "Because."}),
        ("approved", {"output": {}}),
        ("approved", {"summary": "Looked at it."}),
        ("failed", {"note": "Broken.", "evidence": [{"kind": "link", "ref": "https://x.example"}]}),
        ("completed", {"note": "A note.", "output": {}}),
        ("completed", {"output": {}}),
        ("returned", {"note": "Back."}),
    ]
    for decision, extra in cases:
        await s.refused(s.person1, "decide", "invalid", decision=decision, **base, **extra)
    memo = await s.start("conform-memo", {"topic": "x"})
    task = work_item(memo, "write")
    task_cases: list[tuple[str, dict[str, Any]]] = [
        ("approved", {}),
        ("rejected", {"note": "No."}),
        ("returned", {"note": "Back."}),
    ]
    for decision, extra in task_cases:
        await s.refused(
            s.person1,
            "decide",
            "invalid",
            runId=memo["run"]["id"],
            workItemId=task["id"],
            snapshot=task["snapshot"],
            decision=decision,
            **extra,
        )
    equal(
        "approval items after the refusals", (await s.view(view["run"]["id"]))["workItems"], view["workItems"]
    )
    equal("task items after the refusals", (await s.view(memo["run"]["id"]))["workItems"], memo["workItems"])
