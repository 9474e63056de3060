"""What an agent hands in: submissions and their acceptance, uploads and evidence, escalations, test
mode and the run data cap (spec §3.3, §5, §6 rule 3; tools.md submit, upload, escalate)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from conform.checks.common import (
    VENDOR_STEP,
    chain_run,
    expect_decide_call,
    fetch,
    file_items,
    vendor_at_approval,
    vendor_run,
    vendor_submission,
)
from conform.expect import equal, equal_time, true
from conform.registry import check
from conform.session import Session, states, step_entry, work_item

DEFAULT_UPLOAD_BYTES = 10 * 1024 * 1024


@check("agent.acceptance", "spec §6 rule 3; tools.md submit", covers=("submit/not_accepted",))
async def acceptance(s: Session) -> None:
    """Every issue at once, in tools.md's words; nothing changes and the claim stands."""
    run_id = await vendor_run(s)
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
    run_id = await vendor_run(s)
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
    run_id = await chain_run(s)
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
    run_id = await vendor_run(s)
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
    run_id = await vendor_run(s)
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
    expect_decide_call(item, run_id, ["returned", "completed", "failed"])
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
    run_id = await vendor_run(s)
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
    run_id = await chain_run(s)
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
