"""Leases and handoff (spec §3.3 "Handoff", §3.4 `returned`, §2.2 `due`; tools.md `renew`, `get_work`).

What the previous attempt left: the latest `progress` after an expired lease, the `issues` of a refused
submission, `returned` from a person; several at once. A lease that ends makes the step claimable at
that instant (no timer loop needed). A returned escalation keeps its `due`; a repeat restarts it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.conformance.conformance_support import (
    AGENT,
    AGENT2,
    FIN1,
    OPS,
    VENDOR,
    VENDOR_BIND,
    Server,
    states,
    step_entry,
    vendor_submission,
    work_item,
)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def _vendor_run(server: Server) -> str:
    await server.publish(VENDOR, VENDOR_BIND)
    return (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]


async def test_renew_extends_the_lease_by_lease_seconds_and_the_latest_progress_is_handed_on(
    server: Server,
) -> None:
    run_id = await _vendor_run(server)
    lease = (await server.ok(AGENT, "describe"))["leaseSeconds"]
    claimed = await server.claim(run_id, "check_vendor")
    server.clock.advance(seconds=lease // 2)
    first = await server.ok(AGENT, "renew", token=claimed["token"], progress="Checked OFAC.")
    assert _at(first["expiresAt"]) == server.clock.now() + timedelta(seconds=lease)
    assert first["token"] != claimed["token"]
    server.clock.advance(seconds=lease // 2)
    second = await server.ok(AGENT, "renew", token=first["token"], progress="Checked OFAC and EU.")
    third = await server.ok(AGENT, "renew", token=second["token"])
    server.clock.advance(seconds=lease)
    assert states(await server.view(run_id))["check_vendor"] == "ready"
    listed = (await server.ok(AGENT2, "get_work"))["items"]
    assert [(i["stepId"], i["handoff"], i["readySince"]) for i in listed] == [
        ("check_vendor", {"progress": "Checked OFAC and EU."}, third["expiresAt"]),
    ]
    taken = await server.claim(run_id, "check_vendor", who=AGENT2)
    assert taken["handoff"] == {"progress": "Checked OFAC and EU."}


async def test_issues_of_a_refused_submission_are_handed_on_with_the_progress(server: Server) -> None:
    run_id = await _vendor_run(server)
    lease = (await server.ok(AGENT, "describe"))["leaseSeconds"]
    claimed = await server.claim(run_id, "check_vendor")
    renewed = await server.ok(AGENT, "renew", token=claimed["token"], progress="Report drafted.")
    arguments = await vendor_submission(server, renewed["token"])
    del arguments["evidence"]
    error = await server.refused(AGENT, "submit", "not_accepted", ["evidence: file required"], **arguments)
    server.clock.advance(seconds=lease)
    listed = (await server.ok(AGENT2, "get_work"))["items"]
    expected = {"progress": "Report drafted.", "issues": error["issues"]}
    assert [i["handoff"] for i in listed] == [expected]
    assert (await server.claim(run_id, "check_vendor", who=AGENT2))["handoff"] == expected


async def test_a_returned_escalation_carries_the_note_and_keeps_its_due(server: Server) -> None:
    run_id = await _vendor_run(server)
    due = step_entry(await server.view(run_id), "check_vendor")["due"]
    server.clock.advance(hours=3)
    claimed = await server.claim(run_id, "check_vendor")
    escalated = await server.ok(AGENT, "escalate", token=claimed["token"], note="The EU list is down.")
    server.clock.advance(hours=1)
    returned = await server.decide(
        OPS, escalated, "check_vendor", "returned", note="It is back up; try again."
    )
    assert states(returned)["check_vendor"] == "ready"
    assert returned["run"]["state"] == "active"
    assert returned["workItems"] == []
    assert step_entry(returned, "check_vendor")["due"] == due
    handoff = {"returned": {"note": "It is back up; try again.", "by": OPS.id, "at": "2026-10-06T13:00:00Z"}}
    assert [i["handoff"] for i in (await server.ok(AGENT, "get_work"))["items"]] == [handoff]
    assert (await server.claim(run_id, "check_vendor"))["handoff"] == handoff
    assert "check_vendor" not in returned["data"]["steps"]


async def test_an_operator_completes_an_escalation_under_the_same_acceptance(server: Server) -> None:
    run_id = await _vendor_run(server)
    claimed = await server.claim(run_id, "check_vendor")
    view = await server.ok(AGENT, "escalate", token=claimed["token"], note="Cannot read the report.")
    item = work_item(view, "check_vendor")
    common = {
        "runId": run_id,
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "completed",
    }
    await server.refused(
        OPS,
        "decide",
        "not_accepted",
        ["evidence: file required", "next: required, one of approve, decline", "reason: required"],
        output={"cleared": True, "summary": "By hand."},
        **common,
    )
    await server.refused(FIN1, "decide", "forbidden", output={"cleared": True, "summary": "x"}, **common)
    report = await server.upload(b"manual report", who=OPS)
    done = await server.ok(
        OPS,
        "decide",
        output={"cleared": True, "summary": "By hand."},
        evidence=[{"kind": "file", "ref": report["id"]}],
        next="approve",
        reason="Cleared.",
        **common,
    )
    assert states(done)["check_vendor"] == "done"
    assert done["data"]["steps"]["check_vendor"]["by"] == OPS.id
    assert "summary" not in done["data"]["steps"]["check_vendor"]


async def test_a_repeat_of_a_step_restarts_its_due_clock(server: Server) -> None:
    run_id = await _vendor_run(server)
    claimed = await server.claim(run_id, "check_vendor")
    view = await server.ok(AGENT, "submit", **await vendor_submission(server, claimed["token"]))
    await server.advance(days=1, hours=12)
    view = await server.view(run_id)
    rejected = await server.decide(FIN1, view, "approve", "rejected", note="Redo.")
    assert step_entry(rejected, "check_vendor") == {
        "id": "check_vendor",
        "kind": "agent",
        "state": "ready",
        "due": "2026-10-08T21:00:00Z",
        "overdue": False,
    }
    assert step_entry(rejected, "approve") == {"id": "approve", "kind": "approve", "state": None}
