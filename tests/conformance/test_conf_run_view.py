"""The run view through whole runs (spec §3.1, §3.5, §5; tools.md "Run view").

Step states (`null` until reached, a rewound step `null` again with its `history`), run data records
per step kind, `run.ended` for each way a run ends, `url` on every file evidence item.
"""

from __future__ import annotations

from typing import Any

from tests.conformance.conformance_support import (
    AGENT,
    CHAIN,
    DESK,
    FIN1,
    LEGAL,
    NOT_IN_ORG,
    OPS,
    SIGN,
    TIMED,
    VENDOR,
    VENDOR_BIND,
    Server,
    states,
    step_entry,
    vendor_submission,
    work_item,
)

T0 = "2026-10-06T09:00:00Z"


async def test_steps_and_data_through_a_run_that_finishes(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme", "amount": 48000})
    run_id = view["run"]["id"]
    assert view["run"] == {
        "id": run_id,
        "process": "vendor-screening",
        "version": 1,
        "mode": "live",
        "state": "active",
        "outcome": None,
        "ended": None,
        "startedBy": AGENT.id,
        "startedAt": T0,
        "updatedAt": T0,
    }
    assert view["data"] == {"inputs": {"vendorName": "Acme", "amount": 48000}, "steps": {}}
    assert view["steps"] == [
        {
            "id": "check_vendor",
            "kind": "agent",
            "state": "ready",
            "due": "2026-10-07T09:00:00Z",
            "overdue": False,
        },
        {"id": "approve", "kind": "approve", "state": None},
        {"id": "decline", "kind": "finish", "state": None},
        {"id": "done", "kind": "finish", "state": None},
    ]
    assert view["workItems"] == []
    server.clock.advance(minutes=5)
    claimed = await server.claim(run_id, "check_vendor")
    claimed_view = await server.view(run_id)
    assert states(claimed_view)["check_vendor"] == "claimed"
    assert claimed_view["run"]["state"] == "active"
    server.clock.advance(minutes=5)
    arguments = await vendor_submission(server, claimed["token"])
    submitted = await server.ok(AGENT, "submit", **arguments)
    assert states(submitted) == {"check_vendor": "done", "approve": "waiting", "decline": None, "done": None}
    assert submitted["run"]["state"] == "waiting"
    assert submitted["run"]["updatedAt"] == "2026-10-06T09:10:00Z"
    record = submitted["data"]["steps"]["check_vendor"]
    evidence = record.pop("evidence")
    assert record == {
        "output": arguments["output"],
        "summary": arguments["summary"],
        "next": "approve",
        "reason": arguments["reason"],
        "by": AGENT.id,
        "at": "2026-10-06T09:10:00Z",
        "history": [],
    }
    assert [(e["kind"], e["ref"]) for e in evidence] == [("file", arguments["evidence"][0]["ref"])]
    assert step_entry(submitted, "approve") == {
        "id": "approve",
        "kind": "approve",
        "state": "waiting",
        "due": "2026-10-08T09:10:00Z",
        "overdue": False,
    }
    server.clock.advance(minutes=5)
    ended = await server.decide(FIN1, submitted, "approve", "approved")
    assert states(ended) == {"check_vendor": "done", "approve": "done", "decline": None, "done": "done"}
    assert (ended["run"]["state"], ended["run"]["outcome"]) == ("ended", "onboarded")
    assert ended["run"]["ended"] == {"by": "server", "at": "2026-10-06T09:15:00Z", "note": None}
    assert ended["data"]["steps"]["approve"] == {
        "decision": "approved",
        "by": FIN1.id,
        "at": "2026-10-06T09:15:00Z",
        "history": [],
    }
    assert set(ended["data"]["steps"]) == {"check_vendor", "approve"}
    assert ended["workItems"] == []
    assert await server.view(run_id) == ended


async def test_rejection_rewinds_later_steps_to_null_keeping_history(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    run_id = (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    draft = await server.claim(run_id, "draft")
    await server.ok(AGENT, "submit", token=draft["token"], output={"text": "d1"}, summary="Drafted.")
    polish = await server.claim(run_id, "polish")
    view = await server.ok(AGENT, "submit", token=polish["token"], output={"text": "p1"}, summary="Polished.")
    server.clock.advance(hours=1)
    rejected = await server.decide(FIN1, view, "approve", "rejected", note="Too long.")
    assert states(rejected) == {"draft": "ready", "polish": None, "approve": None, "published": None}
    assert rejected["run"]["state"] == "active"
    steps = rejected["data"]["steps"]
    assert steps["draft"] == {
        "output": {"text": "d1"},
        "summary": "Drafted.",
        "by": AGENT.id,
        "at": T0,
        "history": [],
    }
    assert steps["polish"] == {
        "history": [{"output": {"text": "p1"}, "summary": "Polished.", "by": AGENT.id, "at": T0}],
    }
    assert steps["approve"] == {
        "decision": "rejected",
        "note": "Too long.",
        "by": FIN1.id,
        "at": "2026-10-06T10:00:00Z",
        "history": [],
    }
    again = await server.claim(run_id, "draft")
    assert again["data"]["steps"]["approve"]["note"] == "Too long."
    view = await server.ok(AGENT, "submit", token=again["token"], output={"text": "d2"}, summary="Shorter.")
    assert states(view)["polish"] == "ready"
    assert view["data"]["steps"]["draft"]["history"] == [
        {"output": {"text": "d1"}, "summary": "Drafted.", "by": AGENT.id, "at": T0},
    ]
    polish = await server.claim(run_id, "polish")
    view = await server.ok(
        AGENT, "submit", token=polish["token"], output={"text": "p2"}, summary="Polished again."
    )
    assert view["data"]["steps"]["approve"]["decision"] == "rejected"
    done = await server.decide(FIN1, view, "approve", "approved")
    assert done["data"]["steps"]["approve"] == {
        "decision": "approved",
        "by": FIN1.id,
        "at": "2026-10-06T10:00:00Z",
        "history": [
            {"decision": "rejected", "note": "Too long.", "by": FIN1.id, "at": "2026-10-06T10:00:00Z"}
        ],
    }
    assert [h["output"] for h in done["data"]["steps"]["polish"]["history"]] == [{"text": "p1"}]
    assert done["run"]["outcome"] == "published"


async def test_cancel_ends_with_the_reason_and_cancels_unfinished_steps(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme"})
    run_id = view["run"]["id"]
    await server.claim(run_id, "check_vendor")
    server.clock.advance(minutes=2)
    cancelled = await server.ok(OPS, "cancel", runId=run_id, reason="Vendor withdrew.")
    assert (cancelled["run"]["state"], cancelled["run"]["outcome"]) == ("cancelled", None)
    assert cancelled["run"]["ended"] == {
        "by": OPS.id,
        "at": "2026-10-06T09:02:00Z",
        "note": "Vendor withdrew.",
    }
    assert states(cancelled) == {"check_vendor": "cancelled", "approve": None, "decline": None, "done": None}
    assert cancelled["workItems"] == []
    assert cancelled["data"]["steps"] == {}


async def test_a_failed_decision_ends_the_run_failed(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme"})
    claimed = await server.claim(view["run"]["id"], "check_vendor")
    view = await server.ok(AGENT, "submit", **await vendor_submission(server, claimed["token"]))
    failed = await server.decide(FIN1, view, "approve", "failed", note="The report is forged.")
    assert (failed["run"]["state"], failed["run"]["outcome"]) == ("ended", "failed")
    assert failed["run"]["ended"] == {"by": FIN1.id, "at": T0, "note": "The report is forged."}
    assert states(failed) == {"check_vendor": "done", "approve": "failed", "decline": None, "done": None}
    assert failed["data"]["steps"]["approve"] == {
        "decision": "failed",
        "note": "The report is forged.",
        "by": FIN1.id,
        "at": T0,
        "history": [],
    }
    assert failed["workItems"] == []


async def test_a_rejection_without_on_reject_ends_the_run_rejected(server: Server) -> None:
    await server.publish(SIGN, VENDOR_BIND)
    run_id = (await server.start("quick-sign", {"amount": 10}))["run"]["id"]
    claimed = await server.claim(run_id, "prepare")
    view = await server.ok(AGENT, "submit", token=claimed["token"], output={"amount": 10}, summary="Ready.")
    ended = await server.decide(FIN1, view, "sign", "rejected", note="Not this quarter.")
    assert (ended["run"]["state"], ended["run"]["outcome"]) == ("ended", "rejected")
    assert ended["run"]["ended"] == {"by": FIN1.id, "at": T0, "note": "Not this quarter."}
    assert ended["data"]["steps"]["sign"] == {
        "decision": "rejected",
        "note": "Not this quarter.",
        "by": FIN1.id,
        "at": T0,
        "history": [],
    }
    assert states(ended) == {"prepare": "done", "sign": "done", "signed": None}


async def test_an_escalation_failed_by_an_operator_marks_the_agent_step_failed(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    run_id = (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    claimed = await server.claim(run_id, "draft")
    view = await server.ok(AGENT, "escalate", token=claimed["token"], note="No source material.")
    failed = await server.decide(OPS, view, "draft", "failed", note="Nothing to draft from.")
    assert failed["run"]["ended"] == {"by": OPS.id, "at": T0, "note": "Nothing to draft from."}
    assert states(failed)["draft"] == "failed"
    assert failed["data"]["steps"]["draft"] == {
        "decision": "failed",
        "note": "Nothing to draft from.",
        "by": OPS.id,
        "at": T0,
        "history": [],
    }


async def test_a_person_path_resolving_to_nobody_fails_the_run_by_the_server(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": NOT_IN_ORG}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    ended = await server.ok(
        AGENT, "submit", token=claimed["token"], output={"priority": "high"}, summary="High."
    )
    assert (ended["run"]["state"], ended["run"]["outcome"]) == ("ended", "failed")
    assert ended["run"]["ended"]["by"] == "server"
    assert isinstance(ended["run"]["ended"]["note"], str) and ended["run"]["ended"]["note"]
    assert states(ended)["fix"] == "failed"
    record = ended["data"]["steps"]["fix"]
    assert record == {
        "decision": "failed",
        "note": ended["run"]["ended"]["note"],
        "by": "server",
        "at": T0,
        "history": [],
    }


async def test_waits_record_the_server_and_a_missing_wait_until_value_fails_the_run(server: Server) -> None:
    await server.publish(TIMED, {})
    released = await server.start("timed-release", {"releaseAt": "2026-10-06T09:30:00+00:00"})
    missing = await server.start("timed-release", {})
    assert states(released) == {"pause": "waiting", "hold": None, "done": None}
    assert released["run"]["state"] == "waiting"
    await server.advance(hours=1)
    view = await server.view(released["run"]["id"])
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "released")
    assert view["data"]["steps"] == {
        "pause": {"by": "server", "at": "2026-10-06T10:00:00Z", "history": []},
        "hold": {"by": "server", "at": "2026-10-06T10:00:00Z", "history": []},
    }
    failed = await server.view(missing["run"]["id"])
    assert (failed["run"]["state"], failed["run"]["outcome"]) == ("ended", "failed")
    assert failed["run"]["ended"]["by"] == "server" and failed["run"]["ended"]["note"]
    assert states(failed) == {"pause": "done", "hold": "failed", "done": None}
    assert failed["data"]["steps"]["hold"]["by"] == "server"


def _file_items(value: Any) -> list[dict[str, Any]]:
    """Every evidence item with kind file anywhere inside a result."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if value.get("kind") == "file" and "ref" in value:
            found.append(value)
        for inner in value.values():
            found.extend(_file_items(inner))
    elif isinstance(value, list):
        for inner in value:
            found.extend(_file_items(inner))
    return found


async def test_every_file_evidence_item_carries_sha256_and_a_url_wherever_run_data_is_returned(
    server: Server,
) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    run_id = (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]
    first = await server.claim(run_id, "check_vendor")
    arguments = await vendor_submission(server, first["token"])
    arguments["evidence"].append({"kind": "link", "ref": "https://lists.example/acme"})
    submitted = await server.ok(AGENT, "submit", **arguments)
    rejected = await server.decide(FIN1, submitted, "approve", "rejected", note="Add the EU list.")
    second = await server.claim(run_id, "check_vendor")
    report = await server.upload(b"second report")
    escalated = await server.ok(AGENT, "escalate", token=second["token"], note="EU list is down.")
    completed = await server.decide(
        OPS,
        escalated,
        "check_vendor",
        "completed",
        output={"cleared": True, "summary": "Checked by hand."},
        evidence=[{"kind": "file", "ref": report["id"]}],
        next="approve",
        reason="Cleared by hand.",
    )
    final = await server.view(run_id)
    for result in (submitted, rejected, second["data"], completed, final):
        items = _file_items(result)
        assert items
        for item in items:
            assert set(item) == {"kind", "ref", "sha256", "url"}, item
            assert item["url"].startswith("http"), item
    assert [h["evidence"][1] for h in final["data"]["steps"]["check_vendor"]["history"]] == [
        {"kind": "link", "ref": "https://lists.example/acme"},
    ]
    assert final["data"]["steps"]["check_vendor"]["evidence"][0]["sha256"] == report["sha256"]
    assert completed["data"]["steps"]["check_vendor"]["by"] == OPS.id


async def test_work_item_snapshots_match_their_decide_call_and_follow_run_data(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    run_id = view["run"]["id"]
    claimed = await server.claim(run_id, "triage")
    view = await server.ok(
        AGENT, "submit", token=claimed["token"], output={"priority": "low"}, summary="Low."
    )
    fix = work_item(view, "fix")
    assert fix["decide"]["arguments"]["snapshot"] == fix["snapshot"]
    await server.ok(AGENT, "send_event", runId=run_id, name="unrelated")
    after_event = await server.decide(
        LEGAL,
        view,
        "fix",
        "completed",
        output={"fixed": True},
        evidence=[{"kind": "link", "ref": "PR-7"}],
        next="confirm",
        reason="Merged.",
    )
    confirm = work_item(after_event, "confirm")
    assert confirm["snapshot"] != fix["snapshot"]
    assert confirm["assignedTo"] == {"person": FIN1.id}


async def test_wait_until_honours_the_datetime_offset(server: Server) -> None:
    await server.publish(TIMED, {})
    view = await server.start("timed-release", {"releaseAt": "2026-10-06T13:00:00+02:00"})
    run_id = view["run"]["id"]
    await server.advance(hours=1)
    assert states(await server.view(run_id)) == {"pause": "done", "hold": "waiting", "done": None}
    await server.advance(minutes=59)
    assert states(await server.view(run_id))["hold"] == "waiting"
    await server.advance(minutes=1)
    done = await server.view(run_id)
    assert (done["run"]["outcome"], done["data"]["steps"]["hold"]["at"]) == (
        "released",
        "2026-10-06T11:00:00Z",
    )


async def test_history_is_oldest_first_across_repeated_rework(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    run_id = (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    for n in (1, 2, 3):
        for step_id in ("draft", "polish"):
            claimed = await server.claim(run_id, step_id)
            view = await server.ok(
                AGENT, "submit", token=claimed["token"], output={"text": f"{step_id}{n}"}, summary="Done."
            )
        server.clock.advance(minutes=1)
        view = await server.decide(
            FIN1, view, "approve", "rejected" if n < 3 else "approved", note=f"Round {n}."
        )
    steps = view["data"]["steps"]
    assert [h["output"]["text"] for h in steps["draft"]["history"]] == ["draft1", "draft2"]
    assert [h["output"]["text"] for h in steps["polish"]["history"]] == ["polish1", "polish2"]
    assert steps["draft"]["output"] == {"text": "draft3"}
    assert [(h["decision"], h["note"]) for h in steps["approve"]["history"]] == [
        ("rejected", "Round 1."),
        ("rejected", "Round 2."),
    ]
    assert (steps["approve"]["decision"], steps["approve"]["note"]) == ("approved", "Round 3.")


async def test_a_task_completion_records_the_chosen_route(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    view = await server.ok(
        AGENT, "submit", token=claimed["token"], output={"priority": "low"}, summary="Low."
    )
    server.clock.advance(minutes=3)
    ended = await server.decide(
        LEGAL,
        view,
        "fix",
        "completed",
        output={"fixed": False, "notes": "Cannot reproduce."},
        evidence=[{"kind": "link", "ref": "TICKET-1"}],
        next="abandon",
        reason="Nothing to fix.",
    )
    assert (ended["run"]["state"], ended["run"]["outcome"]) == ("ended", "abandoned")
    assert ended["data"]["steps"]["fix"] == {
        "output": {"fixed": False, "notes": "Cannot reproduce."},
        "evidence": [{"kind": "link", "ref": "TICKET-1"}],
        "next": "abandon",
        "reason": "Nothing to fix.",
        "by": LEGAL.id,
        "at": "2026-10-06T09:03:00Z",
        "history": [],
    }
    assert states(ended) == {
        "triage": "done",
        "fix": "done",
        "confirm": None,
        "abandon": "done",
        "closed": None,
    }
