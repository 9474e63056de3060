"""People: the work items they see, for every kind of item, their inbox, and what each decision does
to the run, rework and history included (spec §3.1, §3.4; tools.md "Run view", get_work, decide)."""

from __future__ import annotations

from typing import Any

from conform.checks.common import VENDOR_STEP, desk_at_fix, expect_decide_call, vendor_at_approval
from conform.expect import equal, equal_time, near, true
from conform.registry import check
from conform.session import Session, at_offset, states, step_entry, work_item


def _item_fields(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in ("id", "snapshot", "decide")}


@check("people.approval-item", 'tools.md "Run view" (workItems)')
async def approval_item(s: Session) -> None:
    view = await vendor_at_approval(s)
    item = work_item(view, "approve")
    equal(
        "approval work item",
        _item_fields(item),
        {
            "stepId": "approve",
            "kind": "approve",
            "text": "Approve only when the vendor is cleared.",
            "output": None,
            "evidence": None,
            "next": None,
            "assignedTo": {"group": s.group},
            "due": near(at_offset(view["run"]["updatedAt"], 2 * 86400)),
            "escalation": None,
            "handoff": None,
            "mode": "test",
        },
    )
    expect_decide_call(item, view["run"]["id"], ["approved", "rejected", "failed"])
    equal("snapshot of the decide call", item["decide"]["arguments"]["snapshot"], item["snapshot"])


@check("people.task-item", 'spec §2.2 person, §3.4; tools.md "Run view"')
async def task_item(s: Session) -> None:
    """A task for a `person` path carries the step's requirements as claim gives them; `initiator`
    is the person who started the run."""
    view = await s.start("conform-desk", {"ticket": "T-9", "owner": s.person1.value}, s.person2)
    claimed = await s.claim(view["run"]["id"], "triage")
    equal(
        "claim.step",
        claimed["step"],
        {
            "id": "triage",
            "instructions": "Triage the ticket.",
            "output": {
                "priority": {"type": "string", "one_of": ["low", "high"]},
                "tags": {
                    "type": "list",
                    "items": {"type": "string", "one_of": ["billing", "access", "other"]},
                    "optional": True,
                },
            },
            "evidence": None,
            "next": None,
        },
    )
    view = await s.submit(claimed["token"], {"priority": "low"})
    item = work_item(view, "fix")
    equal(
        "task work item",
        _item_fields(item),
        {
            "stepId": "fix",
            "kind": "task",
            "text": "Fix the problem and link the change.",
            "output": {"fixed": "boolean", "notes": {"type": "string", "optional": True}},
            "evidence": ["link"],
            "next": [{"to": "confirm", "when": "The fix worked"}, {"to": "abandon"}],
            "assignedTo": {"person": s.person1.value},
            "due": None,
            "escalation": None,
            "handoff": None,
            "mode": "test",
        },
    )
    expect_decide_call(item, view["run"]["id"], ["completed", "failed"])
    view = await s.decide(
        s.person1,
        view,
        "fix",
        "completed",
        output={"fixed": True},
        evidence=[{"kind": "link", "ref": "PR-1"}],
        next="confirm",
        reason="Merged.",
    )
    equal(
        "assignment of confirm (initiator)",
        work_item(view, "confirm")["assignedTo"],
        {"person": s.person2.value},
    )


@check("people.inbox", "tools.md get_work (called by a person)")
async def inbox(s: Session) -> None:
    """A person's get_work: their open items, oldest first, each as get_run shows it."""
    first = await vendor_at_approval(s)
    second = await vendor_at_approval(s)
    memo = await s.start("conform-memo", {"topic": "x"})
    mine = [first["run"]["id"], second["run"]["id"], memo["run"]["id"]]
    for who in (s.person1, s.person2):
        listed = [i for i in await s.everything(who, "get_work", limit=100) if i["runId"] in mine]
        equal(
            f"{who.name}'s items of the runs",
            [(i["runId"], i["workItem"]["stepId"]) for i in listed],
            [(mine[0], "approve"), (mine[1], "approve"), (mine[2], "write")],
        )
        equal(
            "keys of a person's item", sorted(listed[0]), ["mode", "process", "runId", "version", "workItem"]
        )
        equal(
            "process, version, mode",
            (listed[1]["process"], listed[1]["version"], listed[1]["mode"]),
            ("conform-vendor", s.version("conform-vendor"), "test"),
        )
        shown = work_item(await s.view(mine[1], who), "approve")
        equal("the item as get_run shows it", _item_fields(listed[1]["workItem"]), _item_fields(shown))
    outsider = [i for i in await s.everything(s.outsider, "get_work", limit=100) if i["runId"] in mine]
    equal("the outsider's items of the runs", outsider, [])
    only_memo = [
        i
        for i in await s.everything(s.person1, "get_work", limit=100, process="conform-memo")
        if i["runId"] in mine
    ]
    equal("items under the process filter", [i["runId"] for i in only_memo], [mine[2]])


@check("people.approve", "spec §3.4; tools.md decide")
async def approve(s: Session) -> None:
    """`approved` continues at next; the approval records decision, by, at and nothing else."""
    view = await vendor_at_approval(s)
    done = await s.decide(s.person2, view, "approve", "approved")
    equal(
        "states", states(done), {"check_vendor": "done", "approve": "done", "decline": None, "done": "done"}
    )
    record = done["data"]["steps"]["approve"]
    equal(
        "the approval's record",
        {k: v for k, v in record.items() if k != "at"},
        {"decision": "approved", "by": s.person2.value, "history": []},
    )
    equal_time("the approval's at", record["at"], done["run"]["updatedAt"])
    equal("work items", done["workItems"], [])


@check("people.rework", 'spec §3.1 (rework), §3.2; tools.md "Run view"')
async def rework(s: Session) -> None:
    """A rejection into on_reject rewinds the later steps to null keeping their history; the rejecting
    approval keeps its note current, so the returned-to step reads it."""
    run_id = (await s.start("conform-chain", {"title": "Memo"}))["run"]["id"]
    drafted = await s.work(run_id, "draft", {"text": "d1"})
    view = await s.work(run_id, "polish", {"text": "p1"})
    rejected = await s.decide(s.person1, view, "approve", "rejected", note="Too long.")
    equal(
        "states after the rejection",
        states(rejected),
        {"draft": "ready", "polish": None, "approve": None, "published": None},
    )
    equal("run state", rejected["run"]["state"], "active")
    steps = rejected["data"]["steps"]
    d1 = {
        "output": {"text": "d1"},
        "summary": "Did draft.",
        "by": s.agent.value,
        "at": drafted["data"]["steps"]["draft"]["at"],
    }
    equal("draft (the returned-to step keeps its record)", steps["draft"], {**d1, "history": []})
    equal("polish (rewound: history only)", sorted(steps["polish"]), ["history"])
    equal(
        "polish history",
        [(h["output"], h["summary"], h["by"]) for h in steps["polish"]["history"]],
        [({"text": "p1"}, "Did polish.", s.agent.value)],
    )
    approval = steps["approve"]
    equal(
        "the rejecting approval",
        {k: v for k, v in approval.items() if k != "at"},
        {"decision": "rejected", "note": "Too long.", "by": s.person1.value, "history": []},
    )
    again = await s.claim(run_id, "draft")
    equal("note the returned-to step reads", again["data"]["steps"]["approve"]["note"], "Too long.")
    view = await s.submit(again["token"], {"text": "d2"})
    equal("polish after the second draft", states(view)["polish"], "ready")
    equal("draft history", view["data"]["steps"]["draft"]["history"], [d1])
    view = await s.work(run_id, "polish", {"text": "p2"})
    equal(
        "the rejection until the approval completes again",
        view["data"]["steps"]["approve"]["decision"],
        "rejected",
    )
    done = await s.decide(s.person2, view, "approve", "approved")
    equal(
        "approval history",
        [(h["decision"], h["note"], h["by"]) for h in done["data"]["steps"]["approve"]["history"]],
        [("rejected", "Too long.", s.person1.value)],
    )
    equal("outcome", done["run"]["outcome"], "published")


@check("people.history", "spec §3.1 (history: oldest first)")
async def history(s: Session) -> None:
    run_id = (await s.start("conform-chain", {"title": "Memo"}))["run"]["id"]
    view: dict[str, Any] = {}
    for n in (1, 2, 3):
        for step_id in ("draft", "polish"):
            view = await s.work(run_id, step_id, {"text": f"{step_id}{n}"})
        view = await s.decide(
            s.person1, view, "approve", "rejected" if n < 3 else "approved", note=f"Round {n}."
        )
    steps = view["data"]["steps"]
    equal("draft history", [h["output"]["text"] for h in steps["draft"]["history"]], ["draft1", "draft2"])
    equal("polish history", [h["output"]["text"] for h in steps["polish"]["history"]], ["polish1", "polish2"])
    equal("current draft", steps["draft"]["output"], {"text": "draft3"})
    equal(
        "approval history",
        [(h["decision"], h["note"]) for h in steps["approve"]["history"]],
        [("rejected", "Round 1."), ("rejected", "Round 2.")],
    )
    equal(
        "current approval", (steps["approve"]["decision"], steps["approve"]["note"]), ("approved", "Round 3.")
    )


@check("people.task-route", "spec §3.2, §3.4; tools.md decide")
async def task_route(s: Session) -> None:
    """A task completed with a route records output, evidence, next and reason, and goes there."""
    view = await desk_at_fix(s)
    ended = await s.decide(
        s.person1,
        view,
        "fix",
        "completed",
        output={"fixed": False, "notes": "Cannot reproduce."},
        evidence=[{"kind": "link", "ref": "TICKET-1"}],
        next="abandon",
        reason="Nothing to fix.",
    )
    equal("run", (ended["run"]["state"], ended["run"]["outcome"]), ("ended", "abandoned"))
    record = ended["data"]["steps"]["fix"]
    equal(
        "the task's record",
        {k: v for k, v in record.items() if k != "at"},
        {
            "output": {"fixed": False, "notes": "Cannot reproduce."},
            "evidence": [{"kind": "link", "ref": "TICKET-1"}],
            "next": "abandon",
            "reason": "Nothing to fix.",
            "by": s.person1.value,
            "history": [],
        },
    )
    equal(
        "states",
        states(ended),
        {"triage": "done", "fix": "done", "confirm": None, "abandon": "done", "closed": None},
    )


@check(
    "people.task-acceptance",
    "spec §3.4 (same acceptance as a submission); tools.md decide",
    covers=("decide/not_accepted",),
)
async def task_acceptance(s: Session) -> None:
    view = await desk_at_fix(s)
    item = work_item(view, "fix")
    before = await s.view(view["run"]["id"])
    await s.refused(
        s.person1,
        "decide",
        "not_accepted",
        [
            "output.fixed: expected boolean",
            "output.extra: not declared",
            "evidence: link required",
            "next: required, one of confirm, abandon",
            "reason: required",
        ],
        runId=view["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"fixed": "no", "extra": 1},
        evidence=[],
    )
    after = await s.view(view["run"]["id"])
    equal("run after the refusal", after, before)
    equal("fix after the refusal", states(after)["fix"], "waiting")


@check("people.returned", "spec §3.4 (returned), §3.3 Handoff, §2.2 due")
async def returned(s: Session) -> None:
    """A returned escalation is ready again with the note in handoff.returned; its due is kept."""
    run_id = (await s.start("conform-vendor", {"vendorName": "Acme"}))["run"]["id"]
    due = step_entry(await s.view(run_id), "check_vendor")["due"]
    claimed = await s.claim(run_id, "check_vendor")
    escalated = await s.ok(s.agent, "escalate", token=claimed["token"], note="The EU list is down.")
    back = await s.decide(s.operator, escalated, "check_vendor", "returned", note="It is back up; try again.")
    equal(
        "state after returned",
        (states(back)["check_vendor"], back["run"]["state"], back["workItems"]),
        ("ready", "active", []),
    )
    equal("due after returned", step_entry(back, "check_vendor")["due"], due)
    true("check_vendor" not in back["data"]["steps"], "a returned step has no run data")
    handoff = {
        "returned": {
            "note": "It is back up; try again.",
            "by": s.operator.value,
            "at": near(back["run"]["updatedAt"]),
        }
    }
    listed = await s.agent_items(s.agent, [run_id], "conform-vendor")
    equal("get_work handoff", [i["handoff"] for i in listed], [handoff])
    equal("claim handoff", (await s.claim(run_id, "check_vendor"))["handoff"], handoff)


@check(
    "people.complete-escalation",
    "spec §3.4 (escalated agent step: completed)",
    covers=("decide/not_accepted", "decide/forbidden"),
)
async def complete_escalation(s: Session) -> None:
    """The operator completes an escalated step under the same acceptance; a group member may not."""
    run_id = (await s.start("conform-vendor", {"vendorName": "Acme"}))["run"]["id"]
    claimed = await s.claim(run_id, "check_vendor")
    view = await s.ok(s.agent, "escalate", token=claimed["token"], note="Cannot read the report.")
    item = work_item(view, "check_vendor")
    common = {
        "runId": run_id,
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "completed",
    }
    await s.refused(
        s.operator,
        "decide",
        "not_accepted",
        ["evidence: file required", "next: required, one of approve, decline", "reason: required"],
        output={"cleared": True, "summary": "By hand."},
        **common,
    )
    await s.refused(s.person1, "decide", "forbidden", output={"cleared": True, "summary": "x"}, **common)
    report = await s.upload(b"manual report", s.operator)
    done = await s.ok(
        s.operator,
        "decide",
        output={"cleared": True, "summary": "By hand."},
        evidence=[{"kind": "file", "ref": report["id"]}],
        next="approve",
        reason="Cleared.",
        **common,
    )
    equal("check_vendor", states(done)["check_vendor"], "done")
    record = done["data"]["steps"]["check_vendor"]
    equal("by", record["by"], s.operator.value)
    true("summary" not in record, "a person's completion without a summary records none")
    equal(
        "the step as claim gives it, on the item",
        (item["output"], item["evidence"], item["next"]),
        (VENDOR_STEP["output"], VENDOR_STEP["evidence"], VENDOR_STEP["next"]),
    )
