"""The agent loop: get_work, claim, renew, submit, escalate, upload, leases and handoff (spec §3.3,
§5, §6 rules 2 and 3; tools.md get_work, claim, renew, upload, submit, escalate)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from conform.checks.common import (
    VENDOR_STEP,
    fetch,
    file_items,
    server_time,
    vendor_at_approval,
    vendor_submission,
)
from conform.clock import parse_time
from conform.expect import between, equal, equal_time, near, only, true
from conform.registry import check
from conform.session import Session, at_offset, states, step_entry, work_item

FORGED = ("eyJhbGciOiJub25lIn0.e30.", "not-a-token", "")
DEFAULT_UPLOAD_BYTES = 10 * 1024 * 1024


async def _vendor_run(s: Session) -> str:
    return str((await s.start("conform-vendor", {"vendorName": "Acme"}))["run"]["id"])


async def _chain_run(s: Session) -> str:
    return str((await s.start("conform-chain", {"title": "Memo"}))["run"]["id"])


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
    run_id = await _chain_run(s)
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
    chain = await _chain_run(s)
    for who in (s.person1, s.operator):
        await s.refused(who, "claim", "forbidden", runId=chain, stepId="draft")
    equal("draft after people tried to claim it", states(await s.view(chain))["draft"], "ready")


@check("agent.claim-not-found", "spec §4.3; tools.md claim", covers=("claim/not_found",))
async def claim_not_found(s: Session) -> None:
    run_id = await _chain_run(s)
    await s.refused(s.agent, "claim", "not_found", runId=run_id, stepId="no_such_step")
    await s.refused(s.agent, "claim", "not_found", runId="r_conform_no_such_run", stepId="draft")


@check(
    "agent.token-invalid",
    "tools.md claim (a token that does not verify); spec §4.3",
    covers=("submit/invalid", "renew/invalid", "escalate/invalid"),
)
async def token_invalid(s: Session) -> None:
    """A token the server never issued is `invalid`, never `stale`."""
    run_id = await _chain_run(s)
    await s.claim(run_id, "draft")
    for forged in FORGED:
        await s.refused(s.agent, "submit", "invalid", token=forged, output={"text": "t"}, summary="Done.")
        await s.refused(s.agent, "renew", "invalid", token=forged)
        await s.refused(s.agent, "escalate", "invalid", token=forged, note="Stuck.")


@check("agent.renew", "tools.md renew; spec §3.3", covers=("renew/stale", "submit/stale", "escalate/stale"))
async def renew(s: Session) -> None:
    """renew: a new token and an expiry a lease from now; the old token is stale at once."""
    run_id = await _chain_run(s)
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
    run_id = await _vendor_run(s)
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
    run_id = await _vendor_run(s)
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
    run_id = await _chain_run(s)
    token = (await s.claim(run_id, "draft"))["token"]
    for who in (s.person1, s.operator):
        await s.refused(who, "submit", "forbidden", token=token, output={"text": "t"}, summary="Done.")
        await s.refused(who, "renew", "forbidden", token=token)
        await s.refused(who, "escalate", "forbidden", token=token, note="Stuck.")
    equal("draft after the refused calls", states(await s.view(run_id))["draft"], "claimed")
    await s.submit(token, {"text": "t"})


@check("agent.acceptance", "spec §6 rule 3; tools.md submit", covers=("submit/not_accepted",))
async def acceptance(s: Session) -> None:
    """Every issue at once, in tools.md's words; nothing changes and the claim stands."""
    run_id = await _vendor_run(s)
    claimed = await s.claim(run_id, "check_vendor")
    before = await s.view(run_id)
    await s.refused(
        s.agent,
        "submit",
        "not_accepted",
        [
            "summary: missing",
            "output.summary: missing",
            "output.cleared: expected boolean",
            "output.extra: not declared",
            "evidence: file required",
            "evidence f_000: not found",
            "next: required, one of approve, decline",
            "reason: required",
        ],
        token=claimed["token"],
        output={"cleared": "yes", "extra": 1},
        evidence=[{"kind": "file", "ref": "f_000"}],
        summary="   ",
    )
    equal("run after the refusal", await s.view(run_id), before)
    accepted = await s.ok(s.agent, "submit", **await vendor_submission(s, claimed["token"]))
    equal("approve after the accepted submission", states(accepted)["approve"], "waiting")


@check("agent.acceptance-routes", "spec §3.2, §5, §6 rule 3")
async def acceptance_routes(s: Session) -> None:
    """A link never stands in for a file; a blank reason and an unknown route are refused."""
    run_id = await _vendor_run(s)
    claimed = await s.claim(run_id, "check_vendor")
    arguments = await vendor_submission(s, claimed["token"])
    files = arguments["evidence"]
    arguments["evidence"] = [{"kind": "link", "ref": "https://reports.example/acme.pdf"}]
    await s.refused(s.agent, "submit", "not_accepted", ["evidence: file required"], **arguments)
    arguments["evidence"], arguments["reason"] = files, " \n "
    await s.refused(s.agent, "submit", "not_accepted", ["reason: required"], **arguments)
    arguments["reason"], arguments["next"] = "Cleared.", "accept"
    error = await s.refused(s.agent, "submit", "not_accepted", **arguments)
    issues = error.get("issues") or []
    true(
        len(issues) == 1 and issues[0].startswith("next"),
        f"next outside the routes: expected one issue on next, got {issues}",
    )


@check("agent.next-not-a-list", "spec §3.2; tools.md decide")
async def next_not_a_list(s: Session) -> None:
    """`next` on a step whose next is not a list is `not_accepted`, for an agent and for a person."""
    run_id = await _chain_run(s)
    claimed = await s.claim(run_id, "draft")
    error = await s.refused(
        s.agent,
        "submit",
        "not_accepted",
        token=claimed["token"],
        output={"text": "t"},
        summary="Drafted.",
        next="polish",
        reason="Obvious.",
    )
    true(
        any(i.startswith("next") for i in error.get("issues") or []),
        f"expected an issue on next, got {error.get('issues')}",
    )
    memo = await s.start("conform-memo", {"topic": "x"})
    item = work_item(memo, "write")
    error = await s.refused(
        s.person1,
        "decide",
        "not_accepted",
        runId=memo["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"memo": "m"},
        next="done",
        reason="Obvious.",
    )
    true(
        any(i.startswith("next") for i in error.get("issues") or []),
        f"expected an issue on next, got {error.get('issues')}",
    )
    equal("write after the refused decision", states(await s.view(memo["run"]["id"]))["write"], "waiting")


@check("agent.one-of", "spec §2.3, §6 rule 3 (one_of, including inside lists)")
async def one_of(s: Session) -> None:
    view = await s.start("conform-desk", {"ticket": "T-1", "owner": s.person1.value}, s.person2)
    claimed = await s.claim(view["run"]["id"], "triage")
    error = await s.refused(
        s.agent,
        "submit",
        "not_accepted",
        token=claimed["token"],
        output={"priority": "urgent", "tags": ["billing", "sales"]},
        summary="Hm.",
    )
    fields = sorted(issue.split(":")[0].split("[")[0] for issue in error.get("issues") or [])
    equal("fields with issues", fields, ["output.priority", "output.tags"])
    done = await s.submit(claimed["token"], {"priority": "high", "tags": ["billing", "other"]}, summary="Ok.")
    equal(
        "recorded output",
        done["data"]["steps"]["triage"]["output"],
        {"priority": "high", "tags": ["billing", "other"]},
    )


@check("agent.upload", "tools.md upload; spec §5", covers=("upload/invalid",))
async def upload(s: Session) -> None:
    """`{id, sha256, bytes}` for anyone's upload; content that is not base64 is refused."""
    content = "Prüfbericht für Acme\n".encode()
    for who in (s.agent, s.person1, s.operator):
        stored = await s.ok(
            who,
            "upload",
            fileName="bericht.txt",
            contentType="text/plain; charset=utf-8",
            contentBase64=base64.b64encode(content).decode(),
        )
        equal(
            f"upload by {who.name}",
            (stored["sha256"], stored["bytes"]),
            (hashlib.sha256(content).hexdigest(), len(content)),
        )
        true(bool(stored["id"]), "upload: expected an id")
    for text in ("not base64!", "YQ=", "@@@@"):
        await s.refused(
            s.agent, "upload", "invalid", fileName="a.txt", contentType="text/plain", contentBase64=text
        )


@check("agent.upload-limit", "tools.md upload (maxUploadBytes)", covers=("upload/invalid",))
async def upload_limit(s: Session) -> None:
    limit = int(s.described.get("maxUploadBytes", DEFAULT_UPLOAD_BYTES))
    arguments: dict[str, Any] = {"fileName": "a.bin", "contentType": "application/octet-stream"}
    stored = await s.ok(s.agent, "upload", contentBase64=base64.b64encode(b"x" * limit).decode(), **arguments)
    equal("bytes of an upload at the limit", stored["bytes"], limit)
    await s.refused(
        s.agent, "upload", "invalid", contentBase64=base64.b64encode(b"x" * (limit + 1)).decode(), **arguments
    )


@check("agent.evidence", 'spec §5; tools.md "Evidence item"', covers=("submit/not_accepted",))
async def evidence(s: Session) -> None:
    """Extra evidence of any kind is recorded as given; an unknown file is refused even where none is
    required; a file a person uploaded serves an agent; a long link is a link."""
    view = await s.start("conform-desk", {"ticket": "T-1", "owner": s.person1.value}, s.person2)
    claimed = await s.claim(view["run"]["id"], "triage")
    await s.refused(
        s.agent,
        "submit",
        "not_accepted",
        ["evidence f_missing: not found"],
        token=claimed["token"],
        output={"priority": "low"},
        evidence=[{"kind": "file", "ref": "f_missing"}],
        summary="Low.",
    )
    report = await s.upload(b"log excerpt", s.person2)
    link = "https://files.example/report.pdf?X-Signature=" + "a" * 3000
    given = [
        {"kind": "link", "ref": "TICKET-42"},
        {"kind": "file", "ref": report["id"]},
        {"kind": "link", "ref": link},
    ]
    done = await s.submit(claimed["token"], {"priority": "low"}, evidence=given, summary="Low.")
    recorded = done["data"]["steps"]["triage"]["evidence"]
    equal("recorded links", [recorded[0], recorded[2]], [given[0], given[2]])
    equal(
        "recorded file",
        (recorded[1]["kind"], recorded[1]["ref"], recorded[1]["sha256"]),
        ("file", report["id"], report["sha256"]),
    )


@check("agent.file-urls", "spec §5 (file items carry a short-lived url)")
async def file_urls(s: Session) -> None:
    """Every file item wherever run data is returned has sha256 and a url that opens the stored bytes."""
    content = b"second report: both lists covered"
    run_id = await _vendor_run(s)
    first = await s.claim(run_id, "check_vendor")
    arguments = await vendor_submission(s, first["token"])
    arguments["evidence"].append({"kind": "link", "ref": "https://lists.example/acme"})
    submitted = await s.ok(s.agent, "submit", **arguments)
    rejected = await s.decide(s.person1, submitted, "approve", "rejected", note="Add the EU list.")
    second = await s.claim(run_id, "check_vendor")
    report = await s.upload(content)
    escalated = await s.ok(s.agent, "escalate", token=second["token"], note="The EU list is down.")
    completed = await s.decide(
        s.operator,
        escalated,
        "check_vendor",
        "completed",
        output={"cleared": True, "summary": "Checked by hand."},
        evidence=[{"kind": "file", "ref": report["id"]}],
        next="approve",
        reason="Cleared by hand.",
    )
    final = await s.view(run_id, s.person2)
    for name, result in (
        ("submit", submitted),
        ("decide", rejected),
        ("claim", second["data"]),
        ("decide", completed),
        ("get_run", final),
    ):
        items = file_items(result)
        true(bool(items), f"{name}: expected file evidence in run data")
        for item in items:
            equal(f"{name}: keys of a file evidence item", sorted(item), ["kind", "ref", "sha256", "url"])
    current = final["data"]["steps"]["check_vendor"]
    equal(
        "history keeps the link as given",
        current["history"][0]["evidence"][1],
        {"kind": "link", "ref": "https://lists.example/acme"},
    )
    equal("sha256 of the current file", current["evidence"][0]["sha256"], report["sha256"])
    status, body = await fetch(current["evidence"][0]["url"], s.person2.token)
    equal(
        "GET of the file url",
        (status, hashlib.sha256(body).hexdigest()),
        (200, hashlib.sha256(content).hexdigest()),
    )


@check("agent.escalate", 'spec §3.3, §3.4; tools.md escalate, "Run view"')
async def escalate(s: Session) -> None:
    """The step waits on the operators with the agent's note; the item is the step as claim gave it."""
    run_id = await _vendor_run(s)
    claimed = await s.claim(run_id, "check_vendor")
    due = step_entry(await s.view(run_id), "check_vendor")["due"]
    view = await s.ok(s.agent, "escalate", token=claimed["token"], note="The EU list is unreachable.")
    equal(
        "states after escalate", (states(view)["check_vendor"], view["run"]["state"]), ("waiting", "waiting")
    )
    item = work_item(view, "check_vendor")
    equal(
        "escalated item",
        {k: v for k, v in item.items() if k not in ("id", "snapshot", "decide", "assignedTo", "escalation")},
        {
            "stepId": "check_vendor",
            "kind": "agent",
            "text": VENDOR_STEP["instructions"],
            "output": VENDOR_STEP["output"],
            "evidence": VENDOR_STEP["evidence"],
            "next": VENDOR_STEP["next"],
            "due": due,
            "handoff": None,
            "mode": "test",
        },
    )
    escalation = item["escalation"]
    equal(
        "escalation note and by",
        (escalation["note"], escalation["by"]),
        ("The EU list is unreachable.", s.agent.value),
    )
    equal_time("escalation.at", escalation["at"], view["run"]["updatedAt"])
    equal("assignedTo form", sorted(item["assignedTo"]), ["group"])
    equal(
        "decide call",
        item["decide"],
        {
            "tool": "decide",
            "arguments": {
                "runId": run_id,
                "workItemId": item["id"],
                "snapshot": item["snapshot"],
                "requestId": item["decide"]["arguments"]["requestId"],
            },
            "decisions": ["returned", "completed", "failed"],
        },
    )
    inbox = [i for i in await s.everything(s.operator, "get_work", limit=100) if i["runId"] == run_id]
    equal("operator's get_work items of the run", [i["workItem"]["id"] for i in inbox], [item["id"]])
    equal(
        "the operator's item",
        {k: v for k, v in inbox[0]["workItem"].items() if k not in ("snapshot", "decide")},
        {k: v for k, v in item.items() if k not in ("snapshot", "decide")},
    )
    for who in (s.person1, s.outsider):
        listed = await s.everything(who, "get_work", limit=100)
        equal(f"{who.name}'s items of the run", [i for i in listed if i["runId"] == run_id], [])
    equal("agents' items of the run", await s.agent_items(s.agent, [run_id]), [])


@check("agent.test-mode", 'spec §3.3 (mode: test); tools.md "Run view"')
async def test_mode(s: Session) -> None:
    """Every get_work item, claim and work item of a test run says so; a live run's items do not."""
    run_id = await _vendor_run(s)
    equal(
        "modes of get_work items",
        [i["mode"] for i in await s.agent_items(s.agent, [run_id], "conform-vendor")],
        ["test"],
    )
    claimed = await s.claim(run_id, "check_vendor")
    equal("claim.mode", claimed["mode"], "test")
    escalated = await s.ok(s.agent, "escalate", token=claimed["token"], note="Test escalation.")
    equal("work item mode", work_item(escalated, "check_vendor").get("mode"), "test")
    inbox = [i for i in await s.everything(s.operator, "get_work", limit=100) if i["runId"] == run_id]
    equal(
        "operator's get_work item modes",
        [(i["mode"], i["workItem"].get("mode")) for i in inbox],
        [("test", "test")],
    )
    returned = await s.decide(s.operator, escalated, "check_vendor", "returned", note="Try again.")
    equal("run mode", returned["run"]["mode"], "test")
    equal("claim.mode after return", (await s.claim(run_id, "check_vendor"))["mode"], "test")
    live = await vendor_at_approval(s, mode="live")
    true("mode" not in work_item(live, "approve"), "a live run's work item carries mode")
    listed = [
        i for i in await s.everything(s.person1, "get_work", limit=100) if i["runId"] == live["run"]["id"]
    ]
    equal("a live run's get_work item mode", [i["mode"] for i in listed], ["live"])


@check("agent.run-data-cap", "spec §6 rule 3 (limits.runDataBytes)", covers=("submit/not_accepted",))
async def run_data_cap(s: Session) -> None:
    """The cap bounds inputs at start (`invalid`) and submissions (`not_accepted`, with every other
    issue at once); nothing changes on refusal."""
    cap = int(s.described["limits"]["runDataBytes"])
    error = await s.refused(
        s.agent,
        "start_run",
        "invalid",
        process="conform-chain",
        inputs={"title": "t" * cap, "extra": 1},
        mode="test",
    )
    true(
        "inputs.extra: not declared" in (error.get("issues") or []) and len(error.get("issues") or []) == 2,
        f"inputs over the cap with an undeclared one: expected both issues, got {error.get('issues')}",
    )
    run_id = await _chain_run(s)
    draft = await s.claim(run_id, "draft")
    error = await s.refused(
        s.agent,
        "submit",
        "not_accepted",
        token=draft["token"],
        output={"text": "d" * cap, "extra": 1},
        summary="Long.",
    )
    true(
        "output.extra: not declared" in (error.get("issues") or []) and len(error.get("issues") or []) == 2,
        f"output over the cap with an undeclared field: expected both issues, got {error.get('issues')}",
    )
    half = "d" * (cap * 2 // 5)
    await s.submit(draft["token"], {"text": half})
    polish = await s.claim(run_id, "polish")
    before = await s.view(run_id)
    error = await s.refused(
        s.agent,
        "submit",
        "not_accepted",
        token=polish["token"],
        output={"text": "p" * (cap * 3 // 5)},
        summary="Fits alone.",
    )
    equal(
        "issues of a submission that fits alone but not with the run data", len(error.get("issues") or []), 1
    )
    equal("run after the refusal", await s.view(run_id), before)
    memo = await s.start("conform-memo", {"topic": "x"})
    item = work_item(memo, "write")
    await s.refused(
        s.person1,
        "decide",
        "not_accepted",
        runId=memo["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"memo": "m" * cap},
    )
