"""Work items, claims and `get_work` items, field by field (spec §3.3, §3.4; tools.md "Run view",
`get_work`, `claim`).

`output`, `evidence` and `next` on a work item are the step's requirements exactly as `claim.step`
gives them, `null` on an approval; `decide.decisions` per kind; `assignedTo` group and person forms;
`mode: "test"` on every item of a test run; `escalation` as `{note, by, at}`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.conformance.conformance_support import (
    AGENT,
    DESK,
    FIN1,
    FIN2,
    LEGAL,
    MEMO,
    MEMO_BIND,
    OPS,
    OUTSIDER,
    VENDOR,
    VENDOR_BIND,
    Server,
    states,
    vendor_at_approval,
    work_item,
)

CHECK_VENDOR_STEP = {
    "id": "check_vendor",
    "instructions": "Check the vendor against the sanctions lists.\nAttach the screening report.\n",
    "output": {"cleared": "boolean", "summary": "string"},
    "evidence": ["file"],
    "next": [
        {"to": "approve", "when": "Vendor is cleared on both lists"},
        {"to": "decline", "when": "Any sanctions hit"},
    ],
}


def _decide_call(item: dict[str, Any], run_id: str, decisions: list[str]) -> None:
    call = item["decide"]
    assert call["tool"] == "decide"
    assert set(call["arguments"]) == {"runId", "workItemId", "snapshot", "requestId"}
    assert call["arguments"]["runId"] == run_id
    assert call["arguments"]["workItemId"] == item["id"]
    assert call["arguments"]["snapshot"] == item["snapshot"]
    assert call["decisions"] == decisions


async def test_an_approval_work_item(server: Server) -> None:
    view = await vendor_at_approval(server)
    item = work_item(view, "approve")
    assert {k: v for k, v in item.items() if k not in ("id", "snapshot", "decide")} == {
        "stepId": "approve",
        "kind": "approve",
        "text": "Approve only when the vendor is cleared.",
        "output": None,
        "evidence": None,
        "next": None,
        "assignedTo": {"group": "g_finance"},
        "due": "2026-10-08T09:00:00Z",
        "escalation": None,
        "handoff": None,
    }
    _decide_call(item, view["run"]["id"], ["approved", "rejected", "failed"])


async def test_a_task_work_item_with_a_person_path_and_the_initiator(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-9", "owner": LEGAL.id}, who=FIN2)
    claimed = await server.claim(view["run"]["id"], "triage")
    assert claimed["step"] == {
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
    }
    view = await server.ok(
        AGENT, "submit", token=claimed["token"], output={"priority": "low"}, summary="Low."
    )
    item = work_item(view, "fix")
    assert {k: v for k, v in item.items() if k not in ("id", "snapshot", "decide")} == {
        "stepId": "fix",
        "kind": "task",
        "text": "Fix the problem and link the change.",
        "output": {"fixed": "boolean", "notes": {"type": "string", "optional": True}},
        "evidence": ["link"],
        "next": [{"to": "confirm", "when": "The fix worked"}, {"to": "abandon"}],
        "assignedTo": {"person": LEGAL.id},
        "due": None,
        "escalation": None,
        "handoff": None,
    }
    _decide_call(item, view["run"]["id"], ["completed", "failed"])
    view = await server.decide(
        LEGAL,
        view,
        "fix",
        "completed",
        output={"fixed": True},
        evidence=[{"kind": "link", "ref": "PR-1"}],
        next="confirm",
        reason="Merged.",
    )
    assert work_item(view, "confirm")["assignedTo"] == {"person": FIN2.id}


async def test_an_escalated_agent_step_becomes_an_operator_work_item(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    run_id = (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]
    server.clock.advance(minutes=30)
    claimed = await server.claim(run_id, "check_vendor")
    assert claimed["step"] == CHECK_VENDOR_STEP
    server.clock.advance(minutes=1)
    view = await server.ok(AGENT, "escalate", token=claimed["token"], note="The EU list is unreachable.")
    assert states(view)["check_vendor"] == "waiting"
    assert view["run"]["state"] == "waiting"
    item = work_item(view, "check_vendor")
    assert item["kind"] == "agent"
    assert item["text"] == CHECK_VENDOR_STEP["instructions"]
    assert (item["output"], item["evidence"], item["next"]) == (
        CHECK_VENDOR_STEP["output"],
        CHECK_VENDOR_STEP["evidence"],
        CHECK_VENDOR_STEP["next"],
    )
    assert item["escalation"] == {
        "note": "The EU list is unreachable.",
        "by": AGENT.id,
        "at": "2026-10-06T09:31:00Z",
    }
    assert item["due"] == "2026-10-07T09:00:00Z"
    assert set(item["assignedTo"]) == {"group"}
    _decide_call(item, run_id, ["returned", "completed", "failed"])
    inbox = await server.ok(OPS, "get_work")
    assert [i["workItem"] for i in inbox["items"]] == [item]
    for who in (FIN1, LEGAL, OUTSIDER):
        assert (await server.ok(who, "get_work"))["items"] == []
    assert (await server.ok(AGENT, "get_work"))["items"] == []


async def test_claim_result_fields(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme"})
    lease = (await server.ok(AGENT, "describe"))["leaseSeconds"]
    server.clock.advance(minutes=1)
    claimed = await server.claim(view["run"]["id"], "check_vendor")
    expected_expiry = server.clock.now().timestamp() + lease
    assert set(claimed) <= {"token", "expiresAt", "mode", "step", "handoff", "body", "data", "extensions"}
    assert datetime.fromisoformat(claimed["expiresAt"].replace("Z", "+00:00")).timestamp() == expected_expiry
    assert (claimed["mode"], claimed["handoff"], claimed["body"]) == ("live", None, view["body"])
    assert claimed["data"] == {"inputs": {"vendorName": "Acme"}, "steps": {}}
    assert claimed["token"]


async def test_agent_get_work_items(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    run_id = (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]
    server.clock.advance(minutes=3)
    listed = await server.ok(AGENT, "get_work")
    assert listed == {
        "items": [
            {
                "runId": run_id,
                "stepId": "check_vendor",
                "process": "vendor-screening",
                "version": 1,
                "mode": "live",
                "readySince": "2026-10-06T09:00:00Z",
                "due": "2026-10-07T09:00:00Z",
                "overdue": False,
                "handoff": None,
                "claim": listed["items"][0]["claim"],
            }
        ],
        "nextCursor": None,
    }
    call = listed["items"][0]["claim"]
    assert call["tool"] == "claim"
    assert set(call["arguments"]) == {"runId", "stepId", "requestId"}
    assert (call["arguments"]["runId"], call["arguments"]["stepId"]) == (run_id, "check_vendor")
    await server.publish(MEMO, MEMO_BIND)
    assert (await server.ok(AGENT, "get_work", process="memo-writing"))["items"] == []
    assert len((await server.ok(AGENT, "get_work", process="vendor-screening"))["items"]) == 1
    await server.claim(run_id, "check_vendor")
    assert (await server.ok(AGENT, "get_work"))["items"] == []
    assert (await server.ok(FIN1, "get_work"))["items"] == []


async def test_person_get_work_lists_their_items_oldest_first_as_get_run_shows_them(server: Server) -> None:
    first = await vendor_at_approval(server)
    server.clock.advance(minutes=10)
    second = await vendor_at_approval(server)
    await server.publish(MEMO, MEMO_BIND)
    memo = await server.start("memo-writing", {"topic": "x"})
    for who in (FIN1, FIN2):
        inbox = await server.ok(who, "get_work")
        assert inbox["nextCursor"] is None
        assert [(i["runId"], i["process"], i["version"], i["mode"]) for i in inbox["items"]] == [
            (first["run"]["id"], "vendor-screening", 1, "live"),
            (second["run"]["id"], "vendor-screening", 1, "live"),
        ]
        assert [set(i) for i in inbox["items"]] == [{"runId", "process", "version", "mode", "workItem"}] * 2
        assert inbox["items"][1]["workItem"] == work_item(
            await server.view(second["run"]["id"], who), "approve"
        )
    assert [i["runId"] for i in (await server.ok(LEGAL, "get_work"))["items"]] == [memo["run"]["id"]]
    assert (await server.ok(OUTSIDER, "get_work"))["items"] == []
    only_memo = await server.ok(FIN1, "get_work", process="memo-writing")
    assert only_memo["items"] == []


async def test_a_test_run_says_so_on_every_item_and_claim(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme"}, mode="test")
    run_id = view["run"]["id"]
    assert view["run"]["mode"] == "test"
    assert [i["mode"] for i in (await server.ok(AGENT, "get_work"))["items"]] == ["test"]
    claimed = await server.claim(run_id, "check_vendor")
    assert claimed["mode"] == "test"
    escalated = await server.ok(AGENT, "escalate", token=claimed["token"], note="Test escalation.")
    assert work_item(escalated, "check_vendor")["mode"] == "test"
    inbox = (await server.ok(OPS, "get_work"))["items"]
    assert [(i["mode"], i["workItem"]["mode"]) for i in inbox] == [("test", "test")]
    returned = await server.decide(OPS, escalated, "check_vendor", "returned", note="Try again.")
    again = await server.claim(run_id, "check_vendor")
    assert again["mode"] == "test"
    live = await vendor_at_approval(server)
    assert "mode" not in work_item(live, "approve")
    assert returned["run"]["mode"] == "test"


async def test_overdue_marks_the_step_and_the_work_stays_open(server: Server) -> None:
    view = await vendor_at_approval(server)
    run_id = view["run"]["id"]
    await server.advance(days=2, seconds=1)
    view = await server.view(run_id)
    assert [s for s in view["steps"] if s["id"] == "approve"] == [
        {
            "id": "approve",
            "kind": "approve",
            "state": "waiting",
            "due": "2026-10-08T09:00:00Z",
            "overdue": True,
        }
    ]
    done = await server.decide(FIN1, view, "approve", "approved")
    assert done["run"]["outcome"] == "onboarded"
    await server.publish(VENDOR, VENDOR_BIND)
    late = (await server.start("vendor-screening", {"vendorName": "Late"}))["run"]["id"]
    await server.advance(days=1, seconds=1)
    listed = (await server.ok(AGENT, "get_work"))["items"]
    assert [(i["runId"], i["overdue"]) for i in listed] == [(late, True)]
    await server.claim(late, "check_vendor")
