"""Which error a caller sees when several apply (spec §3.4, §3.5, §4.3, §6; tools.md `claim`, `decide`).

- Every write to an ended or cancelled run other than a replay: `conflict` + `run_ended`, first.
- `decide`: run_ended, already_decided, not_found, stale, forbidden, not_accepted, in that order.
- `claim`: `claimed_by_you` / `claimed_by_other` / `not_ready`; `forbidden` for a non-agent step.
- Tokens: one the server never issued is `invalid`; one whose lease ended or was replaced is `stale`.
"""

from __future__ import annotations

from typing import Any

from tests.conformance.conformance_support import (
    AGENT,
    AGENT2,
    CHAIN,
    DESK,
    FIN1,
    FIN2,
    FORK,
    FORK_BIND,
    LEGAL,
    MEMO,
    MEMO_BIND,
    OPS,
    OUTSIDER,
    VENDOR_BIND,
    Server,
    states,
    vendor_at_approval,
    work_item,
)

RUN_ENDED = ["run_ended"]


async def _forked(server: Server) -> tuple[dict[str, Any], str]:
    """A fork-join run in its fork, `build` claimed by AGENT: (view, token)."""
    await server.publish(FORK, FORK_BIND)
    view = await server.start("fork-join", {"title": "T"})
    run_id = view["run"]["id"]
    prepared = await server.claim(run_id, "prepare")
    await server.ok(AGENT, "submit", token=prepared["token"], output={"plan": "p"}, summary="Planned.")
    token = (await server.claim(run_id, "build"))["token"]
    return await server.view(run_id), token


async def test_run_ended_comes_before_every_other_error_on_every_write(server: Server) -> None:
    view, token = await _forked(server)
    run_id = view["run"]["id"]
    item = work_item(view, "legal_check")
    await server.ok(OPS, "cancel", runId=run_id, reason="Called off.")
    bad_output = {"nope": 1}
    await server.refused(AGENT2, "submit", "conflict", RUN_ENDED, token=token, output=bad_output, summary=" ")
    await server.refused(FIN1, "submit", "conflict", RUN_ENDED, token=token, output={}, summary="x")
    await server.refused(AGENT, "renew", "conflict", RUN_ENDED, token=token)
    await server.refused(AGENT, "escalate", "conflict", RUN_ENDED, token=token, note="Stuck.")
    await server.refused(FIN1, "claim", "conflict", RUN_ENDED, runId=run_id, stepId="no_such_step")
    await server.refused(AGENT, "claim", "conflict", RUN_ENDED, runId=run_id, stepId="build_qa")
    await server.refused(AGENT, "claim", "conflict", RUN_ENDED, runId=run_id, stepId="review")
    await server.refused(
        AGENT,
        "decide",
        "conflict",
        RUN_ENDED,
        runId=run_id,
        workItemId=item["id"],
        snapshot="stale",
        decision="completed",
        output=bad_output,
    )
    await server.refused(
        OUTSIDER,
        "decide",
        "conflict",
        RUN_ENDED,
        runId=run_id,
        workItemId="w_never",
        snapshot="stale",
        decision="approved",
    )
    await server.refused(FIN1, "cancel", "conflict", RUN_ENDED, runId=run_id, reason="Again.")
    await server.refused(OPS, "cancel", "conflict", RUN_ENDED, runId=run_id, reason="Again.")
    await server.refused(FIN1, "send_event", "conflict", RUN_ENDED, runId=run_id, name="payment")
    await server.refused(AGENT, "send_event", "conflict", RUN_ENDED, runId=run_id, name="payment")


async def test_decide_run_ended_before_already_decided(server: Server) -> None:
    view = await vendor_at_approval(server)
    await server.decide(FIN1, view, "approve", "approved")
    assert (await server.view(view["run"]["id"]))["run"]["state"] == "ended"
    item = work_item(view, "approve")
    await server.refused(
        FIN2,
        "decide",
        "conflict",
        RUN_ENDED,
        runId=view["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="approved",
    )


async def test_decide_already_decided_before_not_found_stale_and_forbidden(server: Server) -> None:
    view = await vendor_at_approval(server)
    run_id = view["run"]["id"]
    item = work_item(view, "approve")
    await server.decide(FIN1, view, "approve", "rejected", note="Check the aliases too.")
    assert states(await server.view(run_id))["check_vendor"] == "ready"
    for who in (FIN2, OUTSIDER, AGENT):
        await server.refused(
            who,
            "decide",
            "conflict",
            ["already_decided"],
            runId=run_id,
            workItemId=item["id"],
            snapshot=item["snapshot"],
            decision="approved",
        )


async def test_decide_not_found_before_stale(server: Server) -> None:
    view = await vendor_at_approval(server)
    other = await vendor_at_approval(server)
    foreign = work_item(other, "approve")["id"]
    for item_id in ("w_never_existed", foreign):
        await server.refused(
            FIN1,
            "decide",
            "not_found",
            runId=view["run"]["id"],
            workItemId=item_id,
            snapshot="not-a-snapshot",
            decision="approved",
        )
    await server.refused(
        FIN1,
        "decide",
        "not_found",
        runId="r_no_such_run",
        workItemId=foreign,
        snapshot="x",
        decision="approved",
    )


async def test_decide_stale_before_forbidden(server: Server) -> None:
    view = await vendor_at_approval(server)
    item = work_item(view, "approve")
    for who in (OUTSIDER, LEGAL, AGENT, FIN1):
        await server.refused(
            who,
            "decide",
            "stale",
            runId=view["run"]["id"],
            workItemId=item["id"],
            snapshot=item["snapshot"] + "0",
            decision="approved",
        )


async def test_decide_forbidden_before_not_accepted(server: Server) -> None:
    await server.publish(MEMO, MEMO_BIND)
    view = await server.start("memo-writing", {"topic": "Leases"})
    item = work_item(view, "write")
    arguments = {
        "runId": view["run"]["id"],
        "workItemId": item["id"],
        "snapshot": item["snapshot"],
        "decision": "completed",
        "output": {"memo": 5},
    }
    for who in (FIN1, OUTSIDER, OPS, AGENT):
        await server.refused(who, "decide", "forbidden", **arguments)
    await server.refused(LEGAL, "decide", "not_accepted", ["output.memo: expected string"], **arguments)
    assert await server.view(view["run"]["id"]) == view


async def test_decide_on_a_person_assignment_is_only_for_that_person(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    view = await server.ok(
        AGENT, "submit", token=claimed["token"], output={"priority": "low"}, summary="Low."
    )
    item = work_item(view, "fix")
    assert item["assignedTo"] == {"person": LEGAL.id}
    for who in (FIN1, OPS):
        await server.refused(
            who,
            "decide",
            "forbidden",
            runId=view["run"]["id"],
            workItemId=item["id"],
            snapshot=item["snapshot"],
            decision="failed",
            note="x",
        )


async def test_claim_conflicts_name_who_holds_it_or_say_not_ready(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    view = await server.start("doc-chain", {"title": "Memo"})
    run_id = view["run"]["id"]
    await server.refused(AGENT, "claim", "conflict", ["not_ready"], runId=run_id, stepId="polish")
    first = await server.claim(run_id, "draft")
    await server.refused(AGENT, "claim", "conflict", ["claimed_by_you"], runId=run_id, stepId="draft")
    await server.refused(AGENT2, "claim", "conflict", ["claimed_by_other"], runId=run_id, stepId="draft")
    await server.ok(AGENT, "submit", token=first["token"], output={"text": "t"}, summary="Drafted.")
    await server.refused(AGENT, "claim", "conflict", ["not_ready"], runId=run_id, stepId="draft")
    second = await server.claim(run_id, "polish")
    await server.ok(AGENT, "escalate", token=second["token"], note="The draft is unreadable.")
    await server.refused(AGENT, "claim", "conflict", ["not_ready"], runId=run_id, stepId="polish")


async def test_claim_forbidden_for_non_agent_steps_and_non_agents(server: Server) -> None:
    view = await vendor_at_approval(server)
    run_id = view["run"]["id"]
    await server.refused(AGENT, "claim", "forbidden", runId=run_id, stepId="approve")
    await server.refused(AGENT, "claim", "forbidden", runId=run_id, stepId="done")
    await server.publish(CHAIN, VENDOR_BIND)
    chain = await server.start("doc-chain", {"title": "Memo"})
    for who in (FIN1, OPS):
        await server.refused(who, "claim", "forbidden", runId=chain["run"]["id"], stepId="draft")
    assert states(await server.view(chain["run"]["id"]))["draft"] == "ready"


async def test_claim_not_found_for_unknown_run_or_step(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    view = await server.start("doc-chain", {"title": "Memo"})
    await server.refused(AGENT, "claim", "not_found", runId=view["run"]["id"], stepId="no_such_step")
    await server.refused(AGENT, "claim", "not_found", runId="r_no_such_run", stepId="draft")


async def test_a_token_that_does_not_verify_is_invalid(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    view = await server.start("doc-chain", {"title": "Memo"})
    await server.claim(view["run"]["id"], "draft")
    for forged in ("eyJhbGciOiJub25lIn0.e30.", "not-a-token", ""):
        await server.refused(AGENT, "submit", "invalid", token=forged, output={"text": "t"}, summary="Done.")
        await server.refused(AGENT, "renew", "invalid", token=forged)
        await server.refused(AGENT, "escalate", "invalid", token=forged, note="Stuck.")


async def test_tokens_from_replaced_or_ended_claims_are_stale(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    view = await server.start("doc-chain", {"title": "Memo"})
    run_id = view["run"]["id"]
    lease = (await server.ok(AGENT, "describe"))["leaseSeconds"]
    original = (await server.claim(run_id, "draft"))["token"]
    renewed = (await server.ok(AGENT, "renew", token=original))["token"]
    await server.refused(AGENT, "submit", "stale", token=original, output={"text": "t"}, summary="Done.")
    await server.refused(AGENT, "renew", "stale", token=original)
    await server.refused(AGENT, "escalate", "stale", token=original, note="Stuck.")
    await server.advance(seconds=lease)
    await server.refused(AGENT, "submit", "stale", token=renewed, output={"text": "t"}, summary="Done.")
    await server.refused(AGENT, "renew", "stale", token=renewed)
    other = (await server.claim(run_id, "draft", who=AGENT2))["token"]
    await server.refused(AGENT, "submit", "stale", token=renewed, output={"text": "t"}, summary="Done.")
    await server.ok(AGENT2, "submit", token=other, output={"text": "t"}, summary="Drafted.")
    await server.refused(AGENT2, "submit", "stale", token=other, output={"text": "u"}, summary="Again.")
    escalated = (await server.claim(run_id, "polish"))["token"]
    await server.ok(AGENT, "escalate", token=escalated, note="Cannot polish.")
    await server.refused(AGENT, "submit", "stale", token=escalated, output={"text": "t"}, summary="Done.")


async def test_agent_only_tools_refuse_people_holding_an_agents_token(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    view = await server.start("doc-chain", {"title": "Memo"})
    token = (await server.claim(view["run"]["id"], "draft"))["token"]
    for who in (FIN1, OPS):
        await server.refused(who, "submit", "forbidden", token=token, output={"text": "t"}, summary="Done.")
        await server.refused(who, "renew", "forbidden", token=token)
        await server.refused(who, "escalate", "forbidden", token=token, note="Stuck.")
    assert states(await server.view(view["run"]["id"]))["draft"] == "claimed"
    await server.ok(AGENT, "submit", token=token, output={"text": "t"}, summary="Drafted.")


async def test_cancel_is_for_operators_and_send_event_for_agents_and_operators(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    run_id = (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    for who in (AGENT, FIN1, OUTSIDER):
        await server.refused(who, "cancel", "forbidden", runId=run_id, reason="No.")
    for who in (FIN1, OUTSIDER, LEGAL):
        await server.refused(who, "send_event", "forbidden", runId=run_id, name="payment")
    assert await server.ok(AGENT, "send_event", runId=run_id, name="payment") == {"consumedBy": None}
    assert await server.ok(OPS, "send_event", runId=run_id, name="payment") == {"consumedBy": None}
    cancelled = await server.ok(OPS, "cancel", runId=run_id, reason="Done with it.")
    assert cancelled["run"]["state"] == "cancelled"


async def test_anyone_in_the_organization_reads_and_both_kinds_start_runs(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    by_person = await server.start("doc-chain", {"title": "Memo"}, who=OUTSIDER)
    by_agent = await server.start("doc-chain", {"title": "Memo"}, who=AGENT)
    assert (by_person["run"]["startedBy"], by_agent["run"]["startedBy"]) == (OUTSIDER.id, AGENT.id)
    for who in (AGENT, FIN1, OUTSIDER, OPS):
        assert (await server.view(by_person["run"]["id"], who))["run"]["id"] == by_person["run"]["id"]
        await server.ok(who, "list_runs")
        await server.ok(who, "get_work")
        await server.ok(who, "list_processes")


async def test_unknown_runs_are_not_found(server: Server) -> None:
    await server.refused(OPS, "get_run", "not_found", runId="r_nope")
    await server.refused(OPS, "cancel", "not_found", runId="r_nope", reason="x")
    await server.refused(AGENT, "send_event", "not_found", runId="r_nope", name="payment")
