"""What an agent holds: get_work, claim, renew, leases and their handoff, and the tokens that stand
for them (spec §3.3, §6 rules 2 and 4; tools.md get_work, claim, renew).
"""

from __future__ import annotations

from conform.checks.common import (
    VENDOR_STEP,
    chain_run,
    server_time,
    vendor_at_approval,
    vendor_run,
    vendor_submission,
)
from conform.clock import parse_time
from conform.expect import between, equal, equal_time, near, only, true
from conform.registry import check
from conform.session import Session, at_offset, states

FORGED = ("eyJhbGciOiJub25lIn0.e30.", "not-a-token", "")


@check("agent.get-work", "tools.md get_work; spec §3.3")
async def get_work(s: Session) -> None:
    """A ready agent step is listed with the exact claim call, until it is claimed; people never see it."""
    view = await s.start("conform-vendor", {"vendorName": "Acme"})
    run_id = view["run"]["id"]
    item = only("get_work items of the run", await s.agent_items(s.agent, [run_id], "conform-vendor"))
    equal(
        "get_work item",
        item,
        {
            "runId": run_id,
            "stepId": "check_vendor",
            "process": "conform-vendor",
            "version": s.version("conform-vendor"),
            "mode": "test",
            "readySince": near(view["run"]["startedAt"]),
            "due": near(at_offset(view["run"]["startedAt"], 86400)),
            "overdue": False,
            "handoff": None,
            "claim": {
                "tool": "claim",
                "arguments": {
                    "runId": run_id,
                    "stepId": "check_vendor",
                    "requestId": item["claim"]["arguments"]["requestId"],
                },
            },
        },
    )
    equal(
        "items of the run under another process filter",
        await s.agent_items(s.agent, [run_id], "conform-memo"),
        [],
    )
    await s.ok(s.agent, "claim", **{**item["claim"]["arguments"], "requestId": f"claim-{run_id}"})
    equal("items of the run once claimed", await s.agent_items(s.agent, [run_id]), [])
    equal("items of the run for agent2", await s.agent_items(s.agent2, [run_id]), [])
    for who in (s.person1, s.operator):
        listed = await s.everything(who, "get_work", limit=100)
        equal(f"{who.name}'s items of the run", [i for i in listed if i["runId"] == run_id], [])


@check("agent.claim", "tools.md claim")
async def claim_result(s: Session) -> None:
    """Token, expiry a lease from now, mode, the step as written, no handoff, the body and run data."""
    view = await s.start("conform-vendor", {"vendorName": "Acme"})
    before = view["run"]["startedAt"]
    claimed = await s.claim(view["run"]["id"], "check_vendor")
    after = await server_time(s)
    true(bool(claimed["token"]), "claim: expected a token, got an empty string")
    between("claim.expiresAt", claimed["expiresAt"], at_offset(before, s.lease), at_offset(after, s.lease))
    equal("claim.mode", claimed["mode"], "test")
    equal("claim.step", claimed["step"], VENDOR_STEP)
    equal("claim.handoff", claimed["handoff"], None)
    equal("claim.body", claimed["body"], view["body"])
    equal("claim.data", claimed["data"], {"inputs": {"vendorName": "Acme"}, "steps": {}})
    equal("step state after the claim", states(await s.view(view["run"]["id"]))["check_vendor"], "claimed")


@check(
    "agent.claim-conflicts",
    "tools.md claim",
    covers=("claim/conflict:not_ready", "claim/conflict:claimed_by_you", "claim/conflict:claimed_by_other"),
)
async def claim_conflicts(s: Session) -> None:
    """Who holds a claim is named; a step that is not ready (yet, or any more) says so."""
    run_id = await chain_run(s)
    await s.refused(s.agent, "claim", "conflict", ["not_ready"], runId=run_id, stepId="polish")
    first = await s.claim(run_id, "draft")
    await s.refused(s.agent, "claim", "conflict", ["claimed_by_you"], runId=run_id, stepId="draft")
    await s.refused(s.agent2, "claim", "conflict", ["claimed_by_other"], runId=run_id, stepId="draft")
    await s.submit(first["token"], {"text": "t"})
    await s.refused(s.agent, "claim", "conflict", ["not_ready"], runId=run_id, stepId="draft")
    second = await s.claim(run_id, "polish")
    await s.ok(s.agent, "escalate", token=second["token"], note="The draft is unreadable.")
    await s.refused(s.agent, "claim", "conflict", ["not_ready"], runId=run_id, stepId="polish")


@check("agent.claim-forbidden", "tools.md claim; spec §6 rule 4", covers=("claim/forbidden",))
async def claim_forbidden(s: Session) -> None:
    """Only agent steps are claimed, and only by agents."""
    view = await vendor_at_approval(s)
    run_id = view["run"]["id"]
    await s.refused(s.agent, "claim", "forbidden", runId=run_id, stepId="approve")
    await s.refused(s.agent, "claim", "forbidden", runId=run_id, stepId="done")
    chain = await chain_run(s)
    for who in (s.person1, s.operator):
        await s.refused(who, "claim", "forbidden", runId=chain, stepId="draft")
    equal("draft after people tried to claim it", states(await s.view(chain))["draft"], "ready")


@check("agent.claim-not-found", "spec §4.3; tools.md claim", covers=("claim/not_found",))
async def claim_not_found(s: Session) -> None:
    run_id = await chain_run(s)
    await s.refused(s.agent, "claim", "not_found", runId=run_id, stepId="no_such_step")
    await s.refused(s.agent, "claim", "not_found", runId="r_conform_no_such_run", stepId="draft")


@check(
    "agent.token-invalid",
    "tools.md claim (a token that does not verify); spec §4.3",
    covers=("submit/invalid", "renew/invalid", "escalate/invalid"),
)
async def token_invalid(s: Session) -> None:
    """A token the server never issued is `invalid`, never `stale`."""
    run_id = await chain_run(s)
    await s.claim(run_id, "draft")
    for forged in FORGED:
        await s.refused(s.agent, "submit", "invalid", token=forged, output={"text": "t"}, summary="Done.")
        await s.refused(s.agent, "renew", "invalid", token=forged)
        await s.refused(s.agent, "escalate", "invalid", token=forged, note="Stuck.")


@check("agent.renew", "tools.md renew; spec §3.3", covers=("renew/stale", "submit/stale", "escalate/stale"))
async def renew(s: Session) -> None:
    """renew: a new token and an expiry a lease from now; the old token is stale at once."""
    run_id = await chain_run(s)
    claimed = await s.claim(run_id, "draft")
    before = await server_time(s)
    renewed = await s.ok(s.agent, "renew", token=claimed["token"], progress="Half done.")
    after = await server_time(s)
    true(renewed["token"] != claimed["token"], "renew: expected a new token, got the old one")
    between("renew.expiresAt", renewed["expiresAt"], at_offset(before, s.lease), at_offset(after, s.lease))
    old = claimed["token"]
    await s.refused(s.agent, "submit", "stale", token=old, output={"text": "t"}, summary="Done.")
    await s.refused(s.agent, "renew", "stale", token=old)
    await s.refused(s.agent, "escalate", "stale", token=old, note="Stuck.")
    equal("draft after stale calls", states(await s.view(run_id))["draft"], "claimed")
    await s.submit(renewed["token"], {"text": "t"})
    await s.refused(
        s.agent, "submit", "stale", token=renewed["token"], output={"text": "u"}, summary="Again."
    )
    polish = await s.claim(run_id, "polish")
    await s.ok(s.agent, "escalate", token=polish["token"], note="Cannot polish.")
    await s.refused(s.agent, "submit", "stale", token=polish["token"], output={"text": "t"}, summary="Done.")


@check("agent.lease-expiry", "spec §3.3 Handoff, §6 rule 2; tools.md renew", waits="lease")
async def lease_expiry(s: Session) -> None:
    """When a lease ends the step is claimable at once, and the latest progress note is handed on."""
    run_id = await vendor_run(s)
    claimed = await s.claim(run_id, "check_vendor")
    first = await s.ok(s.agent, "renew", token=claimed["token"], progress="Checked the first list.")
    second = await s.ok(s.agent, "renew", token=first["token"], progress="Checked both lists.")
    last = await s.ok(s.agent, "renew", token=second["token"])
    view = await s.until_view(
        run_id,
        "check_vendor ready once its lease ended",
        lambda v: states(v)["check_vendor"] == "ready",
        parse_time(last["expiresAt"]),
    )
    equal("run state after the lease ended", view["run"]["state"], "active")
    item = only(
        "agent2's get_work items of the run", await s.agent_items(s.agent2, [run_id], "conform-vendor")
    )
    equal("handoff after the lease ended", item["handoff"], {"progress": "Checked both lists."})
    equal_time("readySince after the lease ended", item["readySince"], last["expiresAt"])
    taken = await s.claim(run_id, "check_vendor", s.agent2)
    equal("claim.handoff", taken["handoff"], {"progress": "Checked both lists."})
    await s.refused(
        s.agent,
        "submit",
        "stale",
        token=last["token"],
        output={"cleared": True, "summary": "x"},
        summary="Late.",
    )
    await s.refused(s.agent, "renew", "stale", token=last["token"])


@check("agent.handoff-issues", "spec §3.3 Handoff; tools.md get_work", waits="lease")
async def handoff_issues(s: Session) -> None:
    """The issues of a refused submission travel with the progress note to the next claimant."""
    run_id = await vendor_run(s)
    claimed = await s.claim(run_id, "check_vendor")
    renewed = await s.ok(s.agent, "renew", token=claimed["token"], progress="Report drafted.")
    arguments = await vendor_submission(s, renewed["token"])
    del arguments["evidence"]
    error = await s.refused(s.agent, "submit", "not_accepted", ["evidence: file required"], **arguments)
    await s.until_view(
        run_id,
        "check_vendor ready once its lease ended",
        lambda v: states(v)["check_vendor"] == "ready",
        parse_time(renewed["expiresAt"]),
    )
    expected = {"progress": "Report drafted.", "issues": error["issues"]}
    item = only(
        "agent2's get_work items of the run", await s.agent_items(s.agent2, [run_id], "conform-vendor")
    )
    equal("get_work handoff", item["handoff"], expected)
    equal("claim handoff", (await s.claim(run_id, "check_vendor", s.agent2))["handoff"], expected)


@check(
    "agent.agents-only",
    "spec §6 rules 2 and 4",
    covers=("submit/forbidden", "renew/forbidden", "escalate/forbidden"),
)
async def agents_only(s: Session) -> None:
    """A person holding an agent's token cannot submit, renew or escalate with it."""
    run_id = await chain_run(s)
    token = (await s.claim(run_id, "draft"))["token"]
    for who in (s.person1, s.operator):
        await s.refused(who, "submit", "forbidden", token=token, output={"text": "t"}, summary="Done.")
        await s.refused(who, "renew", "forbidden", token=token)
        await s.refused(who, "escalate", "forbidden", token=token, note="Stuck.")
    equal("draft after the refused calls", states(await s.view(run_id))["draft"], "claimed")
    await s.submit(token, {"text": "t"})
