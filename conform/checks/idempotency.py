"""Idempotency on `requestId` (spec §4, §3.3 Handoff, §3.5, §6 housekeeping rule; tools.md claim).

A repeat with the same arguments returns the original result byte for byte, token included, even
after the lease and the run ended, and changes nothing; other arguments, another tool or another
identity with the same id is `conflict`; a call that failed is not recorded. The same id from another
identity is not a repeat: answering it with the original result would hand one agent's token to
another and break "one actor at a time" (§6 rule 2), so the runner expects `conflict` for it.
"""

from __future__ import annotations

import asyncio
import uuid

from conform.checks.common import vendor_at_approval, vendor_submission
from conform.clock import parse_time
from conform.expect import equal, true
from conform.registry import check
from conform.session import Session, rid, states, wire, work_item


async def _chain_run(s: Session) -> str:
    return str((await s.start("conform-chain", {"title": "Memo"}))["run"]["id"])


async def _runs_tagged(s: Session, tag: str) -> list[str]:
    items = await s.everything(
        s.operator, "list_runs", process="conform-flex", inputs={"tag": tag}, limit=100
    )
    return [item["id"] for item in items]


@check("idempotency.start-run", "spec §4; tools.md start_run")
async def start_run(s: Session) -> None:
    """A repeated start_run returns the original view, after the run moved on, and starts nothing."""
    tag = str(uuid.uuid4())
    arguments = {"process": "conform-flex", "inputs": {"tag": tag}, "mode": "test", "requestId": rid()}
    first = await s.ok(s.agent, "start_run", **arguments)
    await s.work(first["run"]["id"], "work", {})
    again = await s.ok(s.agent, "start_run", **arguments)
    equal("the repeated start_run, as JSON text", wire(again), wire(first))
    equal("runs with the tag", await _runs_tagged(s, tag), [first["run"]["id"]])


@check("idempotency.same-json", "spec §4 (a repeat with the same arguments; RFC 8785 JSON)")
async def same_json(s: Session) -> None:
    """A repeat whose arguments are the same JSON written otherwise (`1` and `1.0` are one number, as
    RFC 8785 writes both) and that writes out a default it omitted (`mode` omitted is "live") is the
    same call: the original result, and no second run. Other arguments are still `conflict`."""
    tag = str(uuid.uuid4())
    inputs = {
        "s": tag,
        "n": 1,
        "b": False,
        "d": "2026-02-28",
        "dt": "2026-10-07T09:00:00Z",
        "l": [2, 0.5],
        "o": {"k": [3]},
        "p": s.person2.value,
    }
    spelled = {**inputs, "n": 1.0, "l": [2.0, 0.5], "o": {"k": [3.0]}}
    arguments = {"process": "conform-typed", "requestId": rid()}
    first = await s.ok(s.agent, "start_run", inputs=inputs, **arguments)
    again = await s.ok(s.agent, "start_run", inputs=spelled, mode="live", **arguments)
    equal("the repeat written otherwise, as JSON text", wire(again), wire(first))
    for other in ({"inputs": {**inputs, "n": 2}}, {"inputs": inputs, "mode": "test"}):
        await s.refused(s.agent, "start_run", "conflict", ["requestId: already used"], **other, **arguments)
    listed = await s.everything(
        s.operator, "list_runs", process="conform-typed", inputs={"s": tag}, limit=100
    )
    equal("runs with the tag", [item["id"] for item in listed], [first["run"]["id"]])


@check("idempotency.claim-after-lease", "tools.md claim (replay); spec §3.3", waits="lease")
async def claim_after_lease(s: Session) -> None:
    """A lost claim answer is retried: the original token comes back after the lease and the run ended."""
    run_id = await _chain_run(s)
    arguments = {"runId": run_id, "stepId": "draft", "requestId": rid()}
    first = await s.ok(s.agent, "claim", **arguments)
    await s.until_view(
        run_id,
        "draft ready once its lease ended",
        lambda v: states(v)["draft"] == "ready",
        parse_time(first["expiresAt"]),
    )
    equal(
        "claim repeated after the lease ended", wire(await s.ok(s.agent, "claim", **arguments)), wire(first)
    )
    equal("draft after the repeat", states(await s.view(run_id))["draft"], "ready")
    await s.ok(s.operator, "cancel", runId=run_id, reason="Stop.")
    equal("claim repeated after the run ended", wire(await s.ok(s.agent, "claim", **arguments)), wire(first))


@check("idempotency.renew-after-lease", "spec §4; tools.md renew", waits="lease", covers=("renew/stale",))
async def renew_after_lease(s: Session) -> None:
    run_id = await _chain_run(s)
    token = (await s.claim(run_id, "draft"))["token"]
    arguments = {"token": token, "requestId": rid()}
    renewed = await s.ok(s.agent, "renew", **arguments)
    await s.until_view(
        run_id,
        "draft ready once its lease ended",
        lambda v: states(v)["draft"] == "ready",
        parse_time(renewed["expiresAt"]),
    )
    equal("renew repeated after the lease ended", await s.ok(s.agent, "renew", **arguments), renewed)
    await s.refused(s.agent, "renew", "stale", token=renewed["token"])


@check("idempotency.after-the-end", "spec §3.5 (a replay is the one write run_ended does not stop)")
async def after_the_end(s: Session) -> None:
    """submit, decide and cancel repeated after the run ended return their original results."""
    view = await s.start("conform-vendor", {"vendorName": "Acme"})
    claimed = await s.claim(view["run"]["id"], "check_vendor")
    submit = {**await vendor_submission(s, claimed["token"]), "requestId": rid()}
    submitted = await s.ok(s.agent, "submit", **submit)
    item = work_item(submitted, "approve")
    decision = {
        "runId": view["run"]["id"],
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "approved",
        "requestId": rid(),
    }
    decided = await s.ok(s.person1, "decide", **decision)
    equal("run state", decided["run"]["state"], "ended")
    equal("submit repeated after the end", wire(await s.ok(s.agent, "submit", **submit)), wire(submitted))
    equal("decide repeated after the end", wire(await s.ok(s.person1, "decide", **decision)), wire(decided))
    run_id = await _chain_run(s)
    cancel = {"runId": run_id, "reason": "Stop.", "requestId": rid()}
    cancelled = await s.ok(s.operator, "cancel", **cancel)
    equal("cancel repeated", wire(await s.ok(s.operator, "cancel", **cancel)), wire(cancelled))


@check("idempotency.every-write", "spec §4 (every write carries a requestId)")
async def every_write(s: Session) -> None:
    """renew, upload, escalate and send_event repeated return what they returned the first time."""
    run_id = await _chain_run(s)
    token = (await s.claim(run_id, "draft"))["token"]
    renew = {"token": token, "progress": "Half.", "requestId": rid()}
    renewed = await s.ok(s.agent, "renew", **renew)
    equal("renew repeated", await s.ok(s.agent, "renew", **renew), renewed)
    upload = {"fileName": "a.txt", "contentType": "text/plain", "contentBase64": "YQ==", "requestId": rid()}
    stored = await s.ok(s.agent, "upload", **upload)
    equal("upload repeated", await s.ok(s.agent, "upload", **upload), stored)
    escalate = {"token": renewed["token"], "note": "Stuck.", "requestId": rid()}
    escalated = await s.ok(s.agent, "escalate", **escalate)
    equal("escalate repeated", wire(await s.ok(s.agent, "escalate", **escalate)), wire(escalated))
    event = {"runId": run_id, "name": "payment", "data": {"n": 1}, "requestId": rid()}
    equal("send_event", await s.ok(s.agent, "send_event", **event), {"consumedBy": None})
    equal("send_event repeated", await s.ok(s.agent, "send_event", **event), {"consumedBy": None})


@check("idempotency.changes-nothing", "spec §4 (a repeat changes nothing)")
async def changes_nothing(s: Session) -> None:
    run_id = await _chain_run(s)
    token = (await s.claim(run_id, "draft"))["token"]
    submit = {"token": token, "output": {"text": "t"}, "summary": "Drafted.", "requestId": rid()}
    await s.ok(s.agent, "submit", **submit)
    before = await s.view(run_id)
    await s.ok(s.agent, "submit", **submit)
    equal("run after the repeat", await s.view(run_id), before)


@check("idempotency.other-arguments", "spec §4, §4.3 conflict", covers=("claim/conflict", "renew/conflict"))
async def other_arguments(s: Session) -> None:
    """The same requestId with other arguments, or for another tool, is `conflict` and does nothing."""
    run_id = await _chain_run(s)
    request = rid()
    first = await s.ok(s.agent, "claim", runId=run_id, stepId="draft", requestId=request)
    await s.refused(s.agent, "claim", "conflict", runId=run_id, stepId="polish", requestId=request)
    await s.refused(s.agent, "renew", "conflict", token=first["token"], requestId=request)
    other = await _chain_run(s)
    await s.refused(s.agent, "claim", "conflict", runId=other, stepId="draft", requestId=request)
    equal("draft of the other run", states(await s.view(other))["draft"], "ready")
    equal(
        "the original claim repeated",
        wire(await s.ok(s.agent, "claim", runId=run_id, stepId="draft", requestId=request)),
        wire(first),
    )


@check("idempotency.other-identity", "spec §4, §6 rule 2", covers=("claim/conflict", "decide/conflict"))
async def other_identity(s: Session) -> None:
    """A requestId is unique in the organization: another identity reusing it is `conflict`, and is
    never handed the first caller's token."""
    run_id = await _chain_run(s)
    request = rid()
    first = await s.ok(s.agent, "claim", runId=run_id, stepId="draft", requestId=request)
    error = await s.refused(s.agent2, "claim", "conflict", runId=run_id, stepId="draft", requestId=request)
    true(first["token"] not in wire(error), "the conflict carries the first caller's token")
    view = await vendor_at_approval(s)
    item = work_item(view, "approve")
    decision = {
        "runId": view["run"]["id"],
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "approved",
        "requestId": rid(),
    }
    await s.ok(s.person1, "decide", **decision)
    await s.refused(s.person2, "decide", "conflict", **decision)


@check("idempotency.failures-not-recorded", "spec §4 (a call that failed is not recorded)")
async def failures_not_recorded(s: Session) -> None:
    """The requestId of a refused call is free: the same id succeeds later, even for another identity."""
    run_id = await _chain_run(s)
    request = rid()
    await s.refused(
        s.agent, "claim", "conflict", ["not_ready"], runId=run_id, stepId="polish", requestId=request
    )
    token = (await s.claim(run_id, "draft"))["token"]
    submit = rid()
    await s.refused(
        s.agent, "submit", "not_accepted", token=token, output={"text": 1}, summary="x", requestId=submit
    )
    done = await s.ok(
        s.agent, "submit", token=token, output={"text": "t"}, summary="Drafted.", requestId=submit
    )
    equal("polish after the retried submit", states(done)["polish"], "ready")
    claimed = await s.ok(s.agent, "claim", runId=run_id, stepId="polish", requestId=request)
    equal("the claim that reused the id", claimed["step"]["id"], "polish")
    other = await _chain_run(s)
    reuse = rid()
    await s.refused(s.person1, "cancel", "forbidden", runId=other, reason="Stop.", requestId=reuse)
    cancelled = await s.ok(s.operator, "cancel", runId=other, reason="Stop.", requestId=reuse)
    equal("the cancel that reused the id", cancelled["run"]["state"], "cancelled")


@check(
    "idempotency.stale-retry",
    "tools.md decide (stale: read again, send the same decision)",
    covers=("decide/stale",),
)
async def stale_retry(s: Session) -> None:
    view = await vendor_at_approval(s)
    item = work_item(view, "approve")
    base = {"runId": view["run"]["id"], "workItemId": item["id"], "decision": "approved", "requestId": rid()}
    await s.refused(s.person1, "decide", "stale", snapshot=item["snapshot"] + "0", **base)
    fresh = work_item(await s.view(view["run"]["id"], s.person1), "approve")["snapshot"]
    decided = await s.ok(s.person1, "decide", snapshot=fresh, **base)
    equal("outcome", decided["run"]["outcome"], "onboarded")


@check("idempotency.event-once", "spec §3.6, §4")
async def event_once(s: Session) -> None:
    """A repeated send_event is held once: it satisfies one wait, not three."""
    run_id = (await s.start("conform-settlement", {"ref": "S-1"}))["run"]["id"]
    event = {"runId": run_id, "name": "payment", "data": {"n": 1}, "requestId": rid()}
    for _ in range(3):
        equal("send_event", await s.ok(s.agent, "send_event", **event), {"consumedBy": None})
    view = await s.work(run_id, "request", {"sent": True})
    equal(
        "waits after the request",
        (states(view)["first_payment"], states(view)["second_payment"]),
        ("done", "waiting"),
    )


@check("idempotency.concurrent-repeat", "spec §4, the housekeeping rule")
async def concurrent_repeat(s: Session) -> None:
    """The same start_run sent twice at the same moment runs once; both get the same answer."""
    tag = str(uuid.uuid4())
    arguments = {"process": "conform-flex", "inputs": {"tag": tag}, "mode": "test", "requestId": rid()}
    first, second = await asyncio.gather(
        s.call(s.agent, "start_run", dict(arguments)), s.call(s.agent, "start_run", dict(arguments))
    )
    equal("both answers ok", (first["ok"], second["ok"]), (True, True))
    equal("the two answers, as JSON text", wire(first), wire(second))
    equal("runs with the tag", len(await _runs_tagged(s, tag)), 1)
