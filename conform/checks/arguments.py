"""`invalid` for arguments that break a tool's schema, before any rule (spec §6 rule 3, §4.3).

Each case is sent against runs that were cancelled, so a server that checks `run_ended`, `stale` or
`not_found` before the schema answers `conflict` or `stale` instead; the answer must be `invalid`.
The cases are data (`CASES`), so the runner's tests can prove each one breaks the published schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conform.expect import fail
from conform.registry import check
from conform.session import Session, rid, work_item

Context = dict[str, str]
Build = Callable[[Context], dict[str, Any]]
LONG = "x" * 4001
DROP = object()
"""A change that removes the argument."""


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    merged = {**base, "requestId": rid(), **changes}
    return {k: v for k, v in merged.items() if v is not DROP}


def _start(**changes: Any) -> Build:
    return lambda c: _with({"process": "conform-vendor", "inputs": {"vendorName": "A"}}, **changes)


def _submit(**changes: Any) -> Build:
    return lambda c: _with({"token": c["token"], "output": {}, "summary": "Done."}, **changes)


def _decide(**changes: Any) -> Build:
    return lambda c: _with(
        {"runId": c["run"], "workItemId": c["item"], "snapshot": c["snapshot"], "decision": "approved"},
        **changes,
    )


def _upload(**changes: Any) -> Build:
    return lambda c: _with(
        {"fileName": "a.txt", "contentType": "text/plain", "contentBase64": "eA=="}, **changes
    )


CASES: list[tuple[str, str, Build]] = [
    ("describe", "unknown argument", lambda c: {"verbose": True}),
    ("list_processes", "cursor not a string", lambda c: {"cursor": 7}),
    ("list_processes", "unknown argument", lambda c: {"limit": 5}),
    ("start_run", "inputs missing", _start(inputs=DROP)),
    ("start_run", "inputs not an object", _start(inputs="Acme")),
    ("start_run", "mode outside the enum", _start(mode="real")),
    ("start_run", "version zero", _start(version=0)),
    ("start_run", "version fractional", _start(version=1.5)),
    ("start_run", "version null", _start(version=None)),
    ("start_run", "requestId missing", _start(requestId=DROP)),
    ("start_run", "requestId empty", _start(requestId="")),
    ("start_run", "requestId too long", _start(requestId="r" * 129)),
    ("get_run", "runId missing", lambda c: {}),
    ("get_run", "runId not a string", lambda c: {"runId": 42}),
    ("get_work", "limit zero", lambda c: {"limit": 0}),
    ("get_work", "limit above 100", lambda c: {"limit": 101}),
    ("get_work", "limit a string", lambda c: {"limit": "5"}),
    ("get_work", "cursor null", lambda c: {"cursor": None}),
    ("get_work", "unknown argument", lambda c: {"runId": c["run"]}),
    ("list_runs", "state outside the enum", lambda c: {"state": "done"}),
    ("list_runs", "state null", lambda c: {"state": None}),
    ("list_runs", "inputs not an object", lambda c: {"inputs": ["Acme"]}),
    ("list_runs", "limit zero", lambda c: {"limit": 0}),
    ("claim", "stepId missing", lambda c: _with({"runId": c["run"]})),
    ("claim", "requestId missing", lambda c: {"runId": c["run"], "stepId": "check_vendor"}),
    ("renew", "progress too long", lambda c: _with({"token": c["token"], "progress": LONG})),
    ("renew", "progress null", lambda c: _with({"token": c["token"], "progress": None})),
    ("renew", "token missing", lambda c: _with({})),
    ("upload", "fileName empty", _upload(fileName="")),
    ("upload", "contentBase64 empty", _upload(contentBase64="")),
    ("upload", "contentType missing", _upload(contentType=DROP)),
    ("submit", "summary missing", _submit(summary=DROP)),
    ("submit", "output missing", _submit(output=DROP)),
    ("submit", "output not an object", _submit(output=[])),
    ("submit", "next null", _submit(next=None)),
    ("submit", "evidence kind outside the enum", _submit(evidence=[{"kind": "url", "ref": "x"}])),
    ("submit", "evidence ref empty", _submit(evidence=[{"kind": "file", "ref": ""}])),
    (
        "submit",
        "evidence item with an extra key",
        _submit(evidence=[{"kind": "link", "ref": "x", "sha256": "0"}]),
    ),
    ("submit", "summary above 2000 characters", _submit(summary="s" * 2001)),
    ("submit", "reason too long", _submit(next="approve", reason=LONG)),
    ("escalate", "note missing", lambda c: _with({"token": c["token"]})),
    ("escalate", "note too long", lambda c: _with({"token": c["token"], "note": LONG})),
    ("decide", "decision outside the enum", _decide(decision="maybe")),
    ("decide", "snapshot missing", _decide(snapshot=DROP)),
    ("decide", "note too long", _decide(decision="rejected", note=LONG)),
    ("decide", "output not an object", _decide(decision="completed", output="yes")),
    ("cancel", "reason missing", lambda c: _with({"runId": c["run"]})),
    ("cancel", "reason too long", lambda c: _with({"runId": c["run"], "reason": LONG})),
    ("send_event", "name missing", lambda c: _with({"runId": c["run"]})),
    (
        "send_event",
        "data not an object",
        lambda c: _with({"runId": c["run"], "name": "payment", "data": [1]}),
    ),
    ("send_event", "data null", lambda c: _with({"runId": c["run"], "name": "payment", "data": None})),
]
TOOLS = list(dict.fromkeys(tool for tool, _, _ in CASES))


async def ended_context(s: Session) -> Context:
    """A cancelled vendor run with its approval item, and the token of another cancelled run."""
    view = await s.start("conform-vendor", {"vendorName": "A"})
    run_id = view["run"]["id"]
    claimed = await s.claim(run_id, "check_vendor")
    report = await s.upload()
    view = await s.submit(
        claimed["token"],
        {"cleared": True, "summary": "No hits."},
        evidence=[{"kind": "file", "ref": report["id"]}],
        next="approve",
        reason="Cleared.",
    )
    item = work_item(view, "approve")
    other = await s.start("conform-vendor", {"vendorName": "B"})
    token = (await s.claim(other["run"]["id"], "check_vendor"))["token"]
    for ended in (other["run"]["id"], run_id):
        await s.ok(s.operator, "cancel", runId=ended, reason="Arguments check.")
    return {"run": run_id, "item": item["id"], "snapshot": item["snapshot"], "token": token}


def _caller(s: Session, tool: str) -> Any:
    if tool == "decide":
        return s.person1
    return s.operator if tool in ("cancel", "send_event") else s.agent


def _tool_check(tool: str) -> Callable[[Session], Any]:
    async def run(s: Session) -> None:
        context = await ended_context(s)
        wrong = []
        for case_tool, why, build in CASES:
            if case_tool != tool:
                continue
            envelope = await s.call(_caller(s, tool), tool, build(context))
            if envelope["ok"] or envelope["error"]["code"] != "invalid":
                got = "ok" if envelope["ok"] else envelope["error"]["code"]
                wrong.append(f"{why}: expected invalid, got {got}")
        if wrong:
            fail("; ".join(wrong))
        s.cover(f"{tool}/invalid")

    run.__doc__ = f"Arguments that break the {tool} schema are invalid, even on an ended run."
    return run


for _tool in TOOLS:
    check(f"arguments.{_tool}", f"spec §6 rule 3; tools.md {_tool}", covers=(f"{_tool}/invalid",))(
        _tool_check(_tool)
    )


@check("arguments.whole-numbers", "JSON Schema integer (draft 2020-12)")
async def whole_numbers(s: Session) -> None:
    """`2.0` is an integer in JSON Schema: a client whose JSON writes floats is not refused."""
    for who in (s.agent, s.person1):
        for tool in ("get_work", "list_runs"):
            data = await s.ok(who, tool, limit=2.0)
            if len(data["items"]) > 2:
                fail(f"{tool} with limit 2.0: expected at most 2 items, got {len(data['items'])}")
