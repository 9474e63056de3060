"""The agent loop through `engine.call`: start, get_work, claim, submit acceptance, escalate."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import (
    MIRA,
    OPS,
    OTHER_AGENT,
    SCREENER,
    SCREENING,
    THREE_AGENTS,
    call,
    claim,
    err,
    make_org,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores

BIND = {"finance-approver": "g_finance"}


async def upload(engine: Engine, content: bytes = b"report") -> str:
    data = ok(
        await call(
            engine,
            SCREENER,
            "upload",
            fileName="report.pdf",
            contentType="application/pdf",
            contentBase64=base64.b64encode(content).decode(),
        ),
        "upload",
    )
    return data["id"]


async def test_describe_reports_protocol_profiles_lease_and_limits(engine: Engine) -> None:
    data = ok(await call(engine, SCREENER, "describe"), "describe")
    assert data == {
        "protocol": "agentprocess",
        "version": "core-2",
        "profiles": ["parallel-1"],
        "leaseSeconds": 600,
        "person": {"format": "email"},
        "tools": [
            "describe",
            "list_processes",
            "start_run",
            "get_run",
            "get_work",
            "claim",
            "renew",
            "upload",
            "submit",
            "escalate",
            "decide",
            "cancel",
            "send_event",
            "list_runs",
        ],
        "maxUploadBytes": 10485760,
        "limits": {
            "runDataBytes": 1048576,
            "checkPass": 0.9,
            "checkFail": None,
            "checkConfidence": 0.8,
            "checkStateBytes": 65536,
        },
    }
    assert engine.tools == data["tools"]


async def test_start_run_returns_the_view_with_the_first_step_ready(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, SCREENING, BIND)
    view = await start(engine, "screening", {"vendorName": "Acme", "amount": 48000})
    run = view["run"]
    assert run["id"].startswith("r_") and len(run["id"]) > 12
    assert {k: v for k, v in run.items() if k != "id"} == {
        "process": "screening",
        "version": 1,
        "mode": "live",
        "state": "active",
        "outcome": None,
        "ended": None,
        "startedBy": "a_screener",
        "startedAt": "2026-10-06T09:00:00Z",
        "updatedAt": "2026-10-06T09:00:00Z",
    }
    assert view["data"] == {"inputs": {"vendorName": "Acme", "amount": 48000}, "steps": {}}
    assert view["steps"] == [
        {"id": "check_vendor", "kind": "agent", "state": "ready"},
        {"id": "approve", "kind": "approve", "state": None},
        {"id": "decline", "kind": "finish", "state": None},
        {"id": "done", "kind": "finish", "state": None},
    ]
    assert view["workItems"] == []
    assert view["body"] == "\n# Screening\n\nThe agent screens the vendor; finance approves.\n"
    again = ok(await call(engine, MIRA, "get_run", runId=run["id"]), "get_run")
    assert again == view


async def test_start_run_refuses_bad_inputs_with_every_issue(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, SCREENING, BIND)
    reply = await call(engine, SCREENER, "start_run", process="screening", inputs={"amount": "lots", "x": 1})
    err(
        reply,
        "invalid",
        ["inputs.vendorName: missing", "inputs.amount: expected number", "inputs.x: not declared"],
    )
    err(await call(engine, SCREENER, "start_run", process="nope", inputs={}), "not_found")
    reply = await call(
        engine, SCREENER, "start_run", process="screening", version=2, inputs={"vendorName": "A"}
    )
    err(reply, "not_found")
    err(
        await call(engine, SCREENER, "start_run", process="screening", requestId=""),
        "invalid",
        ["inputs: required", "requestId: must not be empty"],
    )
    assert ok(await call(engine, OPS, "list_runs"), "list_runs")["items"] == []


async def test_schema_violations_are_invalid_before_any_rule(engine: Engine) -> None:
    err(await call(engine, SCREENER, "get_run"), "invalid", ["runId: required"])
    err(await call(engine, SCREENER, "get_run", runId=5), "invalid", ["runId: expected string"])
    err(
        await call(engine, SCREENER, "claim", runId="r_x", stepId="s", extra=1),
        "invalid",
        ["extra: not allowed"],
    )
    err(await call(engine, SCREENER, "get_work", limit=0), "invalid", ["limit: must be >= 1"])
    err(await call(engine, SCREENER, "nope"), "invalid")


async def test_null_is_not_absence_and_a_whole_float_is_an_integer(engine: Engine) -> None:
    """The argument schemas give optional arguments no `null`; JSON Schema `integer` takes `2.0`."""
    err(
        await call(engine, SCREENER, "get_work", cursor=None, process=None),
        "invalid",
        ["cursor: must be omitted, not null", "process: must be omitted, not null"],
    )
    err(
        await call(engine, SCREENER, "get_work", limit=2.5),
        "invalid",
        ["limit: expected integer"],
    )
    err(await call(engine, SCREENER, "get_work", limit=101.0), "invalid", ["limit: must be <= 100"])
    assert ok(await call(engine, SCREENER, "get_work", limit=2.0), "get_work") == {
        "items": [],
        "nextCursor": None,
    }


async def test_an_agent_cannot_start_a_process_with_an_initiator_step(engine: Engine, tmp_path: Path) -> None:
    await publish(
        engine,
        tmp_path,
        """
        ---
        name: with-initiator
        description: The starter confirms.
        steps:
          - id: confirm
            person: initiator
            task: Confirm it.
          - id: done
            finish: done
        ---
        """,
    )
    reply = await call(engine, SCREENER, "start_run", process="with-initiator", inputs={})
    err(reply, "invalid", ["steps.confirm.person: initiator needs a person to start the run"])
    view = await start(engine, "with-initiator", {}, who=MIRA)
    assert view["workItems"][0]["assignedTo"] == {"person": "mira@example.com"}


async def test_inputs_are_bounded_by_run_data_bytes(tmp_path: Path, clock: ManualClock) -> None:

    from engine.org import ServerSettings

    org = make_org()
    org.server = ServerSettings(run_data_bytes=200)
    engine = await Engine.open(tmp_path / "small", org, clock=clock)
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        reply = await call(
            engine, SCREENER, "start_run", process="three-agents", inputs={"ticket": "x" * 300}
        )
        err(reply, "invalid", ["inputs: 335 bytes exceed limits.runDataBytes (200)"])
        view = await start(engine, "three-agents", {"ticket": "x" * 100})
        token = (await claim(engine, view["run"]["id"], "one"))["token"]
        reply = await call(engine, SCREENER, "submit", token=token, output={"note": "y" * 100}, summary="s")
        err(reply, "not_accepted", ["run data: 317 bytes would exceed limits.runDataBytes (200)"])
    finally:
        await engine.close()


async def test_get_work_lists_ready_agent_steps_oldest_first_with_the_claim_call(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    first = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    clock.advance(60)
    second = (await start(engine, "three-agents", {"ticket": "B"}, mode="test"))["run"]["id"]
    page = ok(await call(engine, SCREENER, "get_work", limit=1), "get_work")
    assert page["items"] == [
        {
            "runId": first,
            "stepId": "one",
            "process": "three-agents",
            "version": 1,
            "mode": "live",
            "readySince": "2026-10-06T09:00:00Z",
            "due": None,
            "overdue": False,
            "handoff": None,
            "claim": {
                "tool": "claim",
                "arguments": {"runId": first, "stepId": "one", "requestId": "<new UUID>"},
            },
        }
    ]
    rest = ok(await call(engine, SCREENER, "get_work", limit=1, cursor=page["nextCursor"]), "get_work")
    assert [(i["runId"], i["mode"], i["readySince"]) for i in rest["items"]] == [
        (second, "test", "2026-10-06T09:01:00Z")
    ]
    assert rest["nextCursor"] is None
    assert ok(await call(engine, SCREENER, "get_work", process="other"), "get_work")["items"] == []
    err(await call(engine, SCREENER, "get_work", cursor="garbage"), "invalid", ["cursor: not valid"])
    claimed = await claim(engine, second, "one")
    assert claimed["mode"] == "test"
    remaining = ok(await call(engine, OTHER_AGENT, "get_work"), "get_work")["items"]
    assert [i["runId"] for i in remaining] == [first]


async def test_claim_returns_token_step_body_data_and_refuses_others(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, SCREENING, BIND)
    run_id = (await start(engine, "screening", {"vendorName": "Acme"}))["run"]["id"]
    data = await claim(engine, run_id, "check_vendor")
    assert len(data["token"]) >= 40
    assert {k: v for k, v in data.items() if k != "token"} == {
        "expiresAt": "2026-10-06T09:10:00Z",
        "mode": "live",
        "step": {
            "id": "check_vendor",
            "instructions": "Check the vendor against the sanctions lists. Attach the report.",
            "output": {"cleared": "boolean", "summary": "string"},
            "evidence": ["file"],
            "next": [{"to": "approve", "when": "Vendor is cleared"}, {"to": "decline", "when": "Any hit"}],
        },
        "handoff": None,
        "body": "\n# Screening\n\nThe agent screens the vendor; finance approves.\n",
        "data": {"inputs": {"vendorName": "Acme"}, "steps": {}},
    }
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view)["check_vendor"] == "claimed"
    assert data["token"] not in json.dumps(view)
    again = await call(engine, SCREENER, "claim", runId=run_id, stepId="check_vendor")
    err(again, "conflict", ["claimed_by_you"])
    err(
        await call(engine, OTHER_AGENT, "claim", runId=run_id, stepId="check_vendor"),
        "conflict",
        ["claimed_by_other"],
    )
    err(await call(engine, SCREENER, "claim", runId=run_id, stepId="approve"), "forbidden")
    err(await call(engine, SCREENER, "claim", runId=run_id, stepId="nope"), "not_found")
    err(await call(engine, SCREENER, "claim", runId="r_nope", stepId="check_vendor"), "not_found")
    err(await call(engine, MIRA, "claim", runId=run_id, stepId="check_vendor"), "forbidden")
    err(await call(engine, MIRA, "submit", token=data["token"], output={}, summary="s"), "forbidden")


async def test_claim_on_a_step_not_ready_is_a_conflict(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    err(await call(engine, SCREENER, "claim", runId=run_id, stepId="two"), "conflict", ["not_ready"])


async def test_submit_reports_every_issue_at_once_and_changes_nothing(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, SCREENING, BIND)
    run_id = (await start(engine, "screening", {"vendorName": "Acme"}))["run"]["id"]
    token = (await claim(engine, run_id, "check_vendor"))["token"]
    before = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    reply = await call(
        engine,
        SCREENER,
        "submit",
        token=token,
        output={"cleared": "yes", "extra": 1},
        evidence=[{"kind": "file", "ref": "f_000"}],
        summary="  ",
    )
    err(
        reply,
        "not_accepted",
        [
            "output.cleared: expected boolean",
            "output.summary: missing",
            "output.extra: not declared",
            "evidence: file required",
            "evidence f_000: not found",
            "next: required, one of approve, decline",
            "reason: required",
            "summary: missing",
        ],
    )
    after = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert after == before
    file_id = await upload(engine)
    accepted = await call(
        engine,
        SCREENER,
        "submit",
        token=token,
        output={"cleared": True, "summary": "No hits."},
        evidence=[{"kind": "file", "ref": file_id}, {"kind": "link", "ref": "https://lists.example/ofac"}],
        summary="Searched both lists.",
        next="approve",
        reason="Vendor is cleared.",
    )
    view = ok(accepted, "submit")
    record = view["data"]["steps"]["check_vendor"]
    url = record["evidence"][0].pop("url")
    assert url.startswith(f"http://127.0.0.1:8765/files/{file_id}?expires=")
    assert record == {
        "output": {"cleared": True, "summary": "No hits."},
        "evidence": [
            {"kind": "file", "ref": file_id, "sha256": hashlib.sha256(b"report").hexdigest()},
            {"kind": "link", "ref": "https://lists.example/ofac"},
        ],
        "summary": "Searched both lists.",
        "next": "approve",
        "reason": "Vendor is cleared.",
        "by": "a_screener",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    assert step_states(view) == {"check_vendor": "done", "approve": "waiting", "decline": None, "done": None}
    assert view["run"]["state"] == "waiting"


async def test_next_on_a_single_next_step_is_not_accepted(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    reply = await call(
        engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s", next="two", reason="r"
    )
    err(
        reply,
        "not_accepted",
        [
            "next: not taken, this step's next is not a list",
            "reason: not taken, this step's next is not a list",
        ],
    )
    err(
        await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, next="two"),
        "invalid",
        ["summary: required"],
    )
    view = ok(
        await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "submit"
    )
    assert step_states(view)["two"] == "ready"


async def test_a_refused_submission_leaves_its_issues_in_the_handoff(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    err(
        await call(engine, SCREENER, "submit", token=token, output={}, summary="s"),
        "not_accepted",
        ["output.note: missing"],
    )
    clock.advance(601)
    items = ok(await call(engine, OTHER_AGENT, "get_work"), "get_work")["items"]
    assert [(i["stepId"], i["readySince"], i["handoff"]) for i in items] == [
        ("one", "2026-10-06T09:10:00Z", {"issues": ["output.note: missing"]})
    ]
    data = await claim(engine, run_id, "one", who=OTHER_AGENT)
    assert data["handoff"] == {"issues": ["output.note: missing"]}
    err(await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "stale")


async def test_escalate_hands_the_step_to_the_operators(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    err(await call(engine, SCREENER, "escalate", token=token, note=" "), "invalid", ["note: required"])
    view = ok(await call(engine, SCREENER, "escalate", token=token, note="The ticket is locked."), "escalate")
    assert step_states(view)["one"] == "waiting"
    assert view["run"]["state"] == "waiting"
    [item] = view["workItems"]
    assert item["id"].startswith("w_")
    assert {k: v for k, v in item.items() if k not in ("id", "snapshot", "decide")} == {
        "stepId": "one",
        "kind": "agent",
        "text": "Do the first thing.",
        "output": {"note": "string"},
        "evidence": None,
        "next": None,
        "assignedTo": {"group": "operators"},
        "due": None,
        "escalation": {"note": "The ticket is locked.", "by": "a_screener", "at": "2026-10-06T09:00:00Z"},
        "handoff": None,
    }
    assert item["decide"]["decisions"] == ["returned", "completed", "failed"]
    err(await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "stale")
    assert ok(await call(engine, SCREENER, "get_work"), "get_work")["items"] == []
    inbox = ok(await call(engine, OPS, "get_work"), "get_work")["items"]
    assert [(i["runId"], i["workItem"]["id"]) for i in inbox] == [(run_id, item["id"])]
    assert ok(await call(engine, MIRA, "get_work"), "get_work")["items"] == []
