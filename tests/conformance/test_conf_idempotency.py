"""Idempotency on `requestId` (spec §4, §3.3 "Handoff", §3.5, §6 housekeeping rule; tools.md `claim`).

- A repeat with the same arguments returns the original result byte for byte, token included, even
  after the lease ended and after the run ended (a replay is the one write `run_ended` does not stop),
  and changes nothing.
- A repeat with other arguments (or for another tool) is `conflict`.
- A call that failed is not recorded, so the same `requestId` can succeed later.
- Scope: a `requestId` is unique within the organization, and a repeat means the same caller sending
  the same call again. The same id from another identity is therefore not a repeat: answering it
  with the original result would hand one agent's token to another and break "one actor at a time"
  (§6 rule 2). We expect `conflict` for it, whatever its arguments.
"""

from __future__ import annotations

from tests.conformance.conformance_support import (
    AGENT,
    AGENT2,
    CHAIN,
    FIN1,
    FIN2,
    OPS,
    SETTLEMENT,
    VENDOR,
    VENDOR_BIND,
    Server,
    rid,
    states,
    vendor_at_approval,
    vendor_submission,
    wire,
    work_item,
)


async def _chain(server: Server) -> str:
    await server.publish(CHAIN, VENDOR_BIND)
    return (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]


async def test_start_run_replay_returns_the_original_view_and_starts_nothing(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    request = rid()
    first = await server.ok(
        AGENT, "start_run", process="doc-chain", inputs={"title": "Memo"}, requestId=request
    )
    claimed = await server.claim(first["run"]["id"], "draft")
    await server.ok(AGENT, "submit", token=claimed["token"], output={"text": "t"}, summary="Drafted.")
    server.clock.advance(minutes=5)
    again = await server.ok(
        AGENT, "start_run", process="doc-chain", inputs={"title": "Memo"}, requestId=request
    )
    assert wire(again) == wire(first)
    assert len((await server.ok(AGENT, "list_runs"))["items"]) == 1


async def test_claim_replay_returns_the_token_after_the_lease_and_the_run_ended(server: Server) -> None:
    run_id = await _chain(server)
    request = rid()
    first = await server.ok(AGENT, "claim", runId=run_id, stepId="draft", requestId=request)
    await server.advance(seconds=(await server.ok(AGENT, "describe"))["leaseSeconds"] + 1)
    after_lease = await server.ok(AGENT, "claim", runId=run_id, stepId="draft", requestId=request)
    assert wire(after_lease) == wire(first)
    assert states(await server.view(run_id))["draft"] == "ready"
    await server.ok(OPS, "cancel", runId=run_id, reason="Stop.")
    after_end = await server.ok(AGENT, "claim", runId=run_id, stepId="draft", requestId=request)
    assert wire(after_end) == wire(first)


async def test_submit_replay_after_the_run_ended_returns_the_original_view(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme"})
    claimed = await server.claim(view["run"]["id"], "check_vendor")
    arguments = {**await vendor_submission(server, claimed["token"]), "requestId": rid()}
    first = await server.ok(AGENT, "submit", **arguments)
    await server.decide(FIN1, first, "approve", "approved")
    assert (await server.view(view["run"]["id"]))["run"]["state"] == "ended"
    server.clock.advance(hours=3)
    again = await server.ok(AGENT, "submit", **arguments)
    assert wire(again) == wire(first)


async def test_decide_and_cancel_replays_after_the_run_ended(server: Server) -> None:
    view = await vendor_at_approval(server)
    item = work_item(view, "approve")
    decision = {
        "runId": view["run"]["id"],
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "approved",
        "requestId": rid(),
    }
    first = await server.ok(FIN1, "decide", **decision)
    assert wire(await server.ok(FIN1, "decide", **decision)) == wire(first)
    await server.publish(CHAIN, VENDOR_BIND)
    run_id = (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    cancel = {"runId": run_id, "reason": "Stop.", "requestId": rid()}
    cancelled = await server.ok(OPS, "cancel", **cancel)
    server.clock.advance(minutes=1)
    assert wire(await server.ok(OPS, "cancel", **cancel)) == wire(cancelled)


async def test_renew_upload_escalate_send_event_replays(server: Server) -> None:
    run_id = await _chain(server)
    token = (await server.claim(run_id, "draft"))["token"]
    renew = {"token": token, "progress": "Half.", "requestId": rid()}
    renewed = await server.ok(AGENT, "renew", **renew)
    assert await server.ok(AGENT, "renew", **renew) == renewed
    upload = {"fileName": "a.txt", "contentType": "text/plain", "contentBase64": "YQ==", "requestId": rid()}
    stored = await server.ok(AGENT, "upload", **upload)
    assert await server.ok(AGENT, "upload", **upload) == stored
    escalate = {"token": renewed["token"], "note": "Stuck.", "requestId": rid()}
    escalated = await server.ok(AGENT, "escalate", **escalate)
    assert wire(await server.ok(AGENT, "escalate", **escalate)) == wire(escalated)
    event = {"runId": run_id, "name": "payment", "data": {"n": 1}, "requestId": rid()}
    assert await server.ok(AGENT, "send_event", **event) == {"consumedBy": None}
    assert await server.ok(AGENT, "send_event", **event) == {"consumedBy": None}


async def test_a_replay_changes_nothing(server: Server) -> None:
    run_id = await _chain(server)
    token = (await server.claim(run_id, "draft"))["token"]
    submit = {"token": token, "output": {"text": "t"}, "summary": "Drafted.", "requestId": rid()}
    await server.ok(AGENT, "submit", **submit)
    before = await server.view(run_id)
    server.clock.advance(minutes=10)
    await server.ok(AGENT, "submit", **submit)
    assert await server.view(run_id) == before


async def test_same_request_id_with_other_arguments_or_tool_is_a_conflict(server: Server) -> None:
    run_id = await _chain(server)
    request = rid()
    first = await server.ok(AGENT, "claim", runId=run_id, stepId="draft", requestId=request)
    await server.refused(AGENT, "claim", "conflict", runId=run_id, stepId="polish", requestId=request)
    await server.refused(AGENT, "renew", "conflict", token=first["token"], requestId=request)
    other_run = (await server.start("doc-chain", {"title": "Other"}))["run"]["id"]
    await server.refused(AGENT, "claim", "conflict", runId=other_run, stepId="draft", requestId=request)
    assert states(await server.view(other_run))["draft"] == "ready"
    assert wire(await server.ok(AGENT, "claim", runId=run_id, stepId="draft", requestId=request)) == wire(
        first
    )


async def test_same_request_id_from_another_identity_is_a_conflict(server: Server) -> None:
    """See the module docstring: the id is unique in the organization, a replay is the same caller's."""
    run_id = await _chain(server)
    request = rid()
    await server.ok(AGENT, "claim", runId=run_id, stepId="draft", requestId=request)
    error = await server.refused(AGENT2, "claim", "conflict", runId=run_id, stepId="draft", requestId=request)
    assert "token" not in wire(error)
    view = await vendor_at_approval(server)
    item = work_item(view, "approve")
    decision = {
        "runId": view["run"]["id"],
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "approved",
        "requestId": rid(),
    }
    await server.ok(FIN1, "decide", **decision)
    await server.refused(FIN2, "decide", "conflict", **decision)


async def test_failed_calls_are_not_recorded(server: Server) -> None:
    run_id = await _chain(server)
    request = rid()
    await server.refused(
        AGENT, "claim", "conflict", ["not_ready"], runId=run_id, stepId="polish", requestId=request
    )
    token = (await server.claim(run_id, "draft"))["token"]
    submit = rid()
    await server.refused(
        AGENT, "submit", "not_accepted", token=token, output={"text": 1}, summary="x", requestId=submit
    )
    done = await server.ok(
        AGENT, "submit", token=token, output={"text": "t"}, summary="Drafted.", requestId=submit
    )
    assert states(done)["polish"] == "ready"
    claimed = await server.ok(AGENT, "claim", runId=run_id, stepId="polish", requestId=request)
    assert claimed["step"]["id"] == "polish"


async def test_a_stale_decision_can_be_retried_with_the_same_request_id(server: Server) -> None:
    """tools.md `decide`: after `stale`, get_run returns a fresh snapshot and the same decision may be
    sent again; the failed call was not recorded, so its requestId is free."""
    view = await vendor_at_approval(server)
    item = work_item(view, "approve")
    request = rid()
    base = {
        "runId": view["run"]["id"],
        "workItemId": item["id"],
        "decision": "approved",
        "requestId": request,
    }
    await server.refused(FIN1, "decide", "stale", snapshot="0" * 32, **base)
    fresh = work_item(await server.view(view["run"]["id"], FIN1), "approve")["snapshot"]
    decided = await server.ok(FIN1, "decide", snapshot=fresh, **base)
    assert decided["run"]["outcome"] == "onboarded"


async def test_renew_replay_after_the_lease_ended_returns_the_original_token(server: Server) -> None:
    run_id = await _chain(server)
    token = (await server.claim(run_id, "draft"))["token"]
    renew = {"token": token, "requestId": rid()}
    renewed = await server.ok(AGENT, "renew", **renew)
    await server.advance(seconds=(await server.ok(AGENT, "describe"))["leaseSeconds"] + 1)
    assert await server.ok(AGENT, "renew", **renew) == renewed
    await server.refused(AGENT, "renew", "stale", token=renewed["token"])


async def test_a_request_id_refused_for_one_identity_is_free_for_another(server: Server) -> None:
    """The refused call was not recorded, so nobody has used the id yet."""
    run_id = await _chain(server)
    request = rid()
    await server.refused(FIN1, "cancel", "forbidden", runId=run_id, reason="Stop.", requestId=request)
    cancelled = await server.ok(OPS, "cancel", runId=run_id, reason="Stop.", requestId=request)
    assert cancelled["run"]["state"] == "cancelled"


async def test_a_replayed_event_is_held_once(server: Server) -> None:
    await server.publish(SETTLEMENT, {})
    run_id = (await server.start("settlement", {"ref": "S-1"}))["run"]["id"]
    event = {"runId": run_id, "name": "payment", "data": {"n": 1}, "requestId": rid()}
    for _ in range(3):
        assert await server.ok(AGENT, "send_event", **event) == {"consumedBy": None}
    claimed = await server.claim(run_id, "request")
    view = await server.ok(AGENT, "submit", token=claimed["token"], output={"sent": True}, summary="Sent.")
    assert states(view)["first_payment"] == "done"
    assert states(view)["second_payment"] == "waiting"
