"""`invalid` for arguments that break the tool's schema, before any rule (spec §6 rule 3, §4.3).

Every case below is first checked to really break `tools/<tool>.arguments.json`, then sent against a
run that has been cancelled (so a server checking `run_ended`, `stale` or `not_found` first would
answer `conflict`/`stale`); the answer must still be `invalid`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine.identity import Identity
from tests.conformance.conformance_support import (
    AGENT,
    ERROR_VALIDATOR,
    FIN1,
    LEGAL,
    MEMO,
    MEMO_BIND,
    OPS,
    Server,
    arguments_valid,
    rid,
    schema_problems,
    vendor_at_approval,
    work_item,
)

Ctx = dict[str, str]
Case = tuple[str, str, Callable[[Ctx], dict[str, Any]]]
LONG_4001 = "x" * 4001
DROP = object()
"""A change that removes the argument."""


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """`base` plus a fresh requestId, with `changes` applied (DROP removes a key)."""
    merged = {**base, "requestId": rid(), **changes}
    return {k: v for k, v in merged.items() if v is not DROP}


def _start(**changes: Any) -> Callable[[Ctx], dict[str, Any]]:
    return lambda c: _with({"process": "vendor-screening", "inputs": {"vendorName": "A"}}, **changes)


def _submit(**changes: Any) -> Callable[[Ctx], dict[str, Any]]:
    return lambda c: _with({"token": c["token"], "output": {}, "summary": "Done."}, **changes)


def _decide(**changes: Any) -> Callable[[Ctx], dict[str, Any]]:
    return lambda c: _with(
        {"runId": c["run"], "workItemId": c["item"], "snapshot": c["snapshot"], "decision": "approved"},
        **changes,
    )


def _upload(**changes: Any) -> Callable[[Ctx], dict[str, Any]]:
    return lambda c: _with(
        {"fileName": "a.txt", "contentType": "text/plain", "contentBase64": "eA=="}, **changes
    )


CASES: list[Case] = [
    ("describe", "unknown argument", lambda c: {"verbose": True}),
    ("list_processes", "cursor not a string", lambda c: {"cursor": 7}),
    ("list_processes", "unknown argument", lambda c: {"limit": 5}),
    ("start_run", "inputs missing", _start(inputs=DROP)),
    ("start_run", "inputs not an object", _start(inputs="Acme")),
    ("start_run", "mode outside the enum", _start(mode="real")),
    ("start_run", "version zero", _start(version=0)),
    ("start_run", "version fractional", _start(version=1.5)),
    ("start_run", "requestId missing", _start(requestId=DROP)),
    ("start_run", "requestId empty", _start(requestId="")),
    ("start_run", "requestId too long", _start(requestId="r" * 129)),
    ("get_run", "runId missing", lambda c: {}),
    ("get_run", "runId not a string", lambda c: {"runId": 42}),
    ("get_work", "limit zero", lambda c: {"limit": 0}),
    ("get_work", "limit above 100", lambda c: {"limit": 101}),
    ("get_work", "limit a string", lambda c: {"limit": "5"}),
    ("get_work", "unknown argument", lambda c: {"runId": c["run"]}),
    ("list_runs", "state outside the enum", lambda c: {"state": "done"}),
    ("list_runs", "inputs not an object", lambda c: {"inputs": ["Acme"]}),
    ("list_runs", "limit zero", lambda c: {"limit": 0}),
    ("claim", "stepId missing", lambda c: _with({"runId": c["run"]})),
    ("claim", "requestId missing", lambda c: {"runId": c["run"], "stepId": "check_vendor"}),
    ("renew", "progress too long", lambda c: _with({"token": c["token"], "progress": LONG_4001})),
    ("renew", "token missing", lambda c: _with({})),
    ("upload", "fileName empty", _upload(fileName="")),
    ("upload", "contentBase64 empty", _upload(contentBase64="")),
    ("upload", "contentType missing", _upload(contentType=DROP)),
    ("submit", "summary missing", _submit(summary=DROP)),
    ("submit", "output missing", _submit(output=DROP)),
    ("submit", "output not an object", _submit(output=[])),
    ("submit", "evidence kind outside the enum", _submit(evidence=[{"kind": "url", "ref": "x"}])),
    ("submit", "evidence ref empty", _submit(evidence=[{"kind": "file", "ref": ""}])),
    (
        "submit",
        "evidence item with an extra key",
        _submit(evidence=[{"kind": "link", "ref": "x", "sha256": "0"}]),
    ),
    ("submit", "summary above 2000 characters", _submit(summary="s" * 2001)),
    ("submit", "reason too long", _submit(next="approve", reason=LONG_4001)),
    ("escalate", "note missing", lambda c: _with({"token": c["token"]})),
    ("escalate", "note too long", lambda c: _with({"token": c["token"], "note": LONG_4001})),
    ("decide", "decision outside the enum", _decide(decision="maybe")),
    ("decide", "snapshot missing", _decide(snapshot=DROP)),
    ("decide", "note too long", _decide(decision="rejected", note=LONG_4001)),
    ("decide", "output not an object", _decide(decision="completed", output="yes")),
    ("cancel", "reason missing", lambda c: _with({"runId": c["run"]})),
    ("cancel", "reason too long", lambda c: _with({"runId": c["run"], "reason": LONG_4001})),
    ("send_event", "name missing", lambda c: _with({"runId": c["run"]})),
    (
        "send_event",
        "data not an object",
        lambda c: _with({"runId": c["run"], "name": "payment", "data": [1]}),
    ),
]

NULL_CASES: list[Case] = [
    ("get_work", "cursor null", lambda c: {"cursor": None}),
    ("list_runs", "state null", lambda c: {"state": None}),
    ("start_run", "version null", _start(version=None)),
    ("renew", "progress null", lambda c: _with({"token": c["token"], "progress": None})),
    ("submit", "next null", _submit(next=None)),
    ("send_event", "data null", lambda c: _with({"runId": c["run"], "name": "payment", "data": None})),
]


async def _cancelled_run_with_a_token_and_an_item(server: Server) -> Ctx:
    """A cancelled vendor run with an approval item, and a token of another cancelled run."""
    view = await vendor_at_approval(server)
    run_id = view["run"]["id"]
    item = work_item(view, "approve")
    other = await server.start("vendor-screening", {"vendorName": "B"})
    token = (await server.claim(other["run"]["id"], "check_vendor"))["token"]
    await server.ok(OPS, "cancel", runId=other["run"]["id"], reason="Audit.")
    await server.ok(OPS, "cancel", runId=run_id, reason="Audit.")
    return {"run": run_id, "item": item["id"], "snapshot": item["snapshot"], "token": token}


async def _not_invalid(
    server: Server, cases: list[tuple[str, str, Callable[[Ctx], dict[str, Any]]]]
) -> list[str]:
    """The cases the server does not answer with `invalid` (each checked to break its schema first)."""
    ctx = await _cancelled_run_with_a_token_and_an_item(server)
    wrong: list[str] = []
    for tool, why, build in cases:
        arguments = build(ctx)
        assert not arguments_valid(tool, arguments), f"test case is schema-valid: {tool}: {why}"
        who = FIN1 if tool == "decide" else (OPS if tool in ("cancel", "send_event") else AGENT)
        envelope = await server.engine.call(who, tool, arguments)
        if envelope["ok"] or envelope["error"]["code"] != "invalid":
            wrong.append(f"{tool}: {why} -> {envelope}")
        else:
            assert not schema_problems(ERROR_VALIDATOR, envelope["error"]), envelope
    return wrong


async def test_arguments_that_break_the_schema_are_invalid_first(server: Server) -> None:
    wrong = await _not_invalid(server, CASES)
    assert not wrong, "\n".join(wrong)


async def test_null_for_an_optional_argument_is_invalid(server: Server) -> None:
    """The argument schemas type optional arguments without `null` (`cursor: string`, `next: string`,
    ...): an explicit null breaks the schema and is `invalid` before any rule, not read as absent."""
    wrong = await _not_invalid(server, NULL_CASES)
    assert not wrong, "\n".join(wrong)


async def test_an_integer_valued_number_is_an_integer(server: Server) -> None:
    """JSON Schema `integer` (draft 2020-12) accepts any number with a zero fractional part, so `2.0`
    is a valid `limit`: a client whose JSON library writes floats must not be refused."""
    await vendor_at_approval(server)
    arguments = {"limit": 2.0}
    assert arguments_valid("get_work", arguments) and arguments_valid("list_runs", arguments)
    assert (await server.call(AGENT, "list_runs", arguments))["ok"] is True
    assert (await server.call(FIN1, "get_work", arguments))["ok"] is True


@pytest.mark.parametrize(
    ("decision", "extra"),
    [
        ("approved", {"next": "done", "reason": "Fine."}),
        ("rejected", {"note": "No.", "reason": "Because."}),
        ("approved", {"output": {}}),
        ("approved", {"summary": "Looked at it."}),
        ("failed", {"note": "Broken.", "evidence": [{"kind": "link", "ref": "https://x"}]}),
        ("completed", {"note": "A note.", "output": {}}),
    ],
    ids=[
        "next on approved",
        "reason on rejected",
        "output on approved",
        "summary on approved",
        "evidence on failed",
        "note on completed",
    ],
)
async def test_decide_fields_a_decision_does_not_take_are_invalid(
    server: Server, decision: str, extra: dict[str, Any]
) -> None:
    """tools.md `decide`: next/reason on anything but completed, note with completed, and
    output/evidence/summary with anything but completed are `invalid`; nothing changes."""
    view = await vendor_at_approval(server)
    item = work_item(view, "approve")
    arguments = {
        "runId": view["run"]["id"],
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": decision,
        "requestId": rid(),
        **extra,
    }
    assert arguments_valid("decide", arguments)
    envelope = await server.call(FIN1, "decide", arguments)
    assert envelope["ok"] is False and envelope["error"]["code"] == "invalid", envelope
    assert (await server.view(view["run"]["id"]))["workItems"] == view["workItems"]


@pytest.mark.parametrize(
    ("step_id", "decision", "extra"),
    [
        ("approve", "completed", {"output": {}}),
        ("approve", "returned", {"note": "Back."}),
        ("write", "approved", {}),
        ("write", "rejected", {"note": "No."}),
        ("write", "returned", {"note": "Back."}),
    ],
    ids=[
        "completed on approve",
        "returned on approve",
        "approved on task",
        "rejected on task",
        "returned on task",
    ],
)
async def test_a_decision_the_item_does_not_accept_is_refused_and_changes_nothing(
    server: Server, step_id: str, decision: str, extra: dict[str, Any]
) -> None:
    """tools.md `decide` "Allowed on": a decision outside `decide.decisions` is bad arguments."""
    if step_id == "approve":
        view, who = await vendor_at_approval(server), FIN1
    else:
        await server.publish(MEMO, MEMO_BIND)
        view, who = await server.start("memo-writing", {"topic": "x"}), LEGAL
    item = work_item(view, step_id)
    assert decision not in item["decide"]["decisions"]
    await server.refused(
        who,
        "decide",
        "invalid",
        runId=view["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision=decision,
        **extra,
    )
    assert (await server.view(view["run"]["id"]))["workItems"] == view["workItems"]


async def test_run_ended_comes_before_argument_rules_that_are_not_in_the_schema(server: Server) -> None:
    """§3.5: every write to an ended run other than a replay is `run_ended`, "checked before anything
    else"; only a schema violation (§6 rule 3) comes earlier. These calls are schema-valid."""
    ctx = await _cancelled_run_with_a_token_and_an_item(server)
    item = {"runId": ctx["run"], "workItemId": ctx["item"], "snapshot": ctx["snapshot"]}
    calls: list[tuple[Identity, str, dict[str, Any]]] = [
        (AGENT, "send_event", {"runId": ctx["run"], "name": "Not A Name"}),
        (FIN1, "decide", {**item, "decision": "rejected"}),
        (FIN1, "decide", {**item, "decision": "approved", "next": "done"}),
        (FIN1, "decide", {**item, "decision": "completed", "note": "Done.", "output": {}}),
        (FIN1, "decide", {**item, "decision": "returned", "note": "Back."}),
        (OPS, "cancel", {"runId": ctx["run"], "reason": " "}),
        (AGENT, "escalate", {"token": ctx["token"], "note": " "}),
    ]
    wrong = []
    for who, tool, arguments in calls:
        arguments = {**arguments, "requestId": rid()}
        assert arguments_valid(tool, arguments), arguments
        envelope = await server.call(who, tool, arguments)
        if envelope["ok"] or envelope["error"].get("issues") != ["run_ended"]:
            wrong.append(f"{tool} {arguments} -> {envelope}")
    assert not wrong, "\n".join(wrong)
