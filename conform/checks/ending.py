"""How runs end, and what an ended run refuses (spec §3.1, §3.5; tools.md "Run view", cancel).

When a run ends or is cancelled every unfinished step is cancelled, every work item removed and every
token stopped; from then on every write other than a replay is `conflict` with `run_ended`, before
any other error a call could have.
"""

from __future__ import annotations

from typing import Any

from conform.checks.common import vendor_at_approval, vendor_submission
from conform.expect import CheckSkipped, equal, equal_time, true
from conform.registry import check
from conform.session import Session, rid, states, work_item

RUN_ENDED = ["run_ended"]


@check(
    "ending.run-ended-first",
    "spec §3.5 (run_ended is checked before anything else)",
    covers=tuple(
        f"{tool}/conflict:run_ended"
        for tool in ("submit", "renew", "escalate", "claim", "decide", "cancel", "send_event")
    ),
)
async def run_ended_first(s: Session) -> None:
    """After a cancel, every write to the run is `run_ended`, whoever sends it and whatever else is
    wrong with it (a stale snapshot, an unknown item, a non-agent caller, bad output)."""
    view = await s.start("conform-chain", {"title": "Memo"})
    run_id = view["run"]["id"]
    await s.work(run_id, "draft", {"text": "t"})
    token = (await s.claim(run_id, "polish"))["token"]
    memo = await s.start("conform-memo", {"topic": "x"})
    item = work_item(memo, "write")
    for ended in (run_id, memo["run"]["id"]):
        await s.ok(s.operator, "cancel", runId=ended, reason="Called off.")
    await s.refused(s.agent2, "submit", "conflict", RUN_ENDED, token=token, output={"nope": 1}, summary=" ")
    await s.refused(s.person1, "submit", "conflict", RUN_ENDED, token=token, output={}, summary="x")
    await s.refused(s.agent, "renew", "conflict", RUN_ENDED, token=token)
    await s.refused(s.agent, "escalate", "conflict", RUN_ENDED, token=token, note="Stuck.")
    await s.refused(s.person1, "claim", "conflict", RUN_ENDED, runId=run_id, stepId="no_such_step")
    await s.refused(s.agent, "claim", "conflict", RUN_ENDED, runId=run_id, stepId="draft")
    await s.refused(s.agent, "claim", "conflict", RUN_ENDED, runId=run_id, stepId="approve")
    memo_id = memo["run"]["id"]
    await s.refused(
        s.agent,
        "decide",
        "conflict",
        RUN_ENDED,
        runId=memo_id,
        workItemId=item["id"],
        snapshot="stale",
        decision="completed",
        output={"nope": 1},
    )
    await s.refused(
        s.outsider,
        "decide",
        "conflict",
        RUN_ENDED,
        runId=memo_id,
        workItemId="w_never",
        snapshot="stale",
        decision="approved",
    )
    await s.refused(
        s.person1,
        "decide",
        "conflict",
        RUN_ENDED,
        runId=memo_id,
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"memo": "m"},
    )
    for who in (s.person1, s.operator):
        await s.refused(who, "cancel", "conflict", RUN_ENDED, runId=run_id, reason="Again.")
    for who in (s.person1, s.agent):
        await s.refused(who, "send_event", "conflict", RUN_ENDED, runId=run_id, name="payment")


@check("ending.run-ended-before-rules", "spec §3.5, §6 rule 3 (only a schema violation comes earlier)")
async def run_ended_before_rules(s: Session) -> None:
    """Schema-valid calls that break a tool's own rules are `run_ended` on an ended run."""
    view = await vendor_at_approval(s)
    run_id = view["run"]["id"]
    item = work_item(view, "approve")
    other = await s.start("conform-chain", {"title": "x"})
    token = (await s.claim(other["run"]["id"], "draft"))["token"]
    for ended in (other["run"]["id"], run_id):
        await s.ok(s.operator, "cancel", runId=ended, reason="Over.")
    base = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
    calls: list[tuple[Any, str, dict[str, Any]]] = [
        (s.agent, "send_event", {"runId": run_id, "name": "Not A Name"}),
        (s.person1, "decide", {**base, "decision": "rejected"}),
        (s.person1, "decide", {**base, "decision": "approved", "next": "done"}),
        (s.person1, "decide", {**base, "decision": "completed", "note": "Done.", "output": {}}),
        (s.person1, "decide", {**base, "decision": "returned", "note": "Back."}),
        (s.operator, "cancel", {"runId": run_id, "reason": " "}),
        (s.agent, "escalate", {"token": token, "note": " "}),
    ]
    for who, tool, arguments in calls:
        await s.refused(who, tool, "conflict", RUN_ENDED, **arguments, requestId=rid())


@check("ending.finish", 'spec §3.2 (a finish ends the run), §3.5; tools.md "Run view"')
async def finish(s: Session) -> None:
    """A run that reaches a finish: outcome, `ended` by the server with no note, no open work."""
    view = await s.start("conform-vendor", {"vendorName": "Acme", "amount": 48000})
    run_id = view["run"]["id"]
    claimed = await s.claim(run_id, "check_vendor")
    arguments = await vendor_submission(s, claimed["token"])
    submitted = await s.ok(s.agent, "submit", **arguments)
    equal(
        "states after the submission",
        states(submitted),
        {"check_vendor": "done", "approve": "waiting", "decline": None, "done": None},
    )
    equal("run state", submitted["run"]["state"], "waiting")
    record = dict(submitted["data"]["steps"]["check_vendor"])
    evidence = record.pop("evidence")
    at = record.pop("at")
    equal(
        "check_vendor's record",
        record,
        {
            "output": arguments["output"],
            "summary": arguments["summary"],
            "next": "approve",
            "reason": arguments["reason"],
            "by": s.agent.value,
            "history": [],
        },
    )
    equal_time("check_vendor.at", at, submitted["run"]["updatedAt"])
    equal("evidence", [(e["kind"], e["ref"]) for e in evidence], [("file", arguments["evidence"][0]["ref"])])
    ended = await s.decide(s.person1, submitted, "approve", "approved")
    equal(
        "states at the end",
        states(ended),
        {"check_vendor": "done", "approve": "done", "decline": None, "done": "done"},
    )
    equal("run", (ended["run"]["state"], ended["run"]["outcome"]), ("ended", "onboarded"))
    equal(
        "ended", {k: v for k, v in ended["run"]["ended"].items() if k != "at"}, {"by": "server", "note": None}
    )
    equal_time("ended.at", ended["run"]["ended"]["at"], ended["run"]["updatedAt"])
    equal("steps with run data", sorted(ended["data"]["steps"]), ["approve", "check_vendor"])
    equal("work items", ended["workItems"], [])
    again = await s.view(run_id, s.outsider)
    equal(
        "get_run after the end",
        {k: v for k, v in again.items() if k != "data"},
        {k: v for k, v in ended.items() if k != "data"},
    )


@check(
    "ending.cancel",
    "spec §3.5; tools.md cancel",
    covers=("cancel/forbidden", "cancel/not_found", "cancel/conflict:run_ended"),
)
async def cancel(s: Session) -> None:
    """Only an operator cancels, with a reason; unfinished steps are cancelled and the items gone."""
    view = await s.start("conform-vendor", {"vendorName": "Acme"})
    run_id = view["run"]["id"]
    await s.claim(run_id, "check_vendor")
    for who in (s.agent, s.person1, s.outsider):
        await s.refused(who, "cancel", "forbidden", runId=run_id, reason="No.")
    await s.refused(s.operator, "cancel", "not_found", runId="r_conform_no_such_run", reason="x")
    cancelled = await s.ok(s.operator, "cancel", runId=run_id, reason="Vendor withdrew.")
    equal("run", (cancelled["run"]["state"], cancelled["run"]["outcome"]), ("cancelled", None))
    equal(
        "ended",
        {k: v for k, v in cancelled["run"]["ended"].items() if k != "at"},
        {"by": s.operator.value, "note": "Vendor withdrew."},
    )
    equal(
        "states",
        states(cancelled),
        {"check_vendor": "cancelled", "approve": None, "decline": None, "done": None},
    )
    equal("work items and run data", (cancelled["workItems"], cancelled["data"]["steps"]), ([], {}))
    await s.refused(s.operator, "cancel", "conflict", RUN_ENDED, runId=run_id, reason="Again.")
    equal("agent work of the run", await s.agent_items(s.agent, [run_id]), [])


@check("ending.failed", 'spec §3.4 (failed), §3.5; tools.md "Run view"')
async def failed(s: Session) -> None:
    """`failed` on an approval ends the run failed; the step is `failed` with the note."""
    view = await vendor_at_approval(s)
    ended = await s.decide(s.person1, view, "approve", "failed", note="The report is forged.")
    equal("run", (ended["run"]["state"], ended["run"]["outcome"]), ("ended", "failed"))
    equal(
        "ended",
        {k: v for k, v in ended["run"]["ended"].items() if k != "at"},
        {"by": s.person1.value, "note": "The report is forged."},
    )
    equal(
        "states", states(ended), {"check_vendor": "done", "approve": "failed", "decline": None, "done": None}
    )
    record = ended["data"]["steps"]["approve"]
    equal(
        "the approval's record",
        {k: v for k, v in record.items() if k != "at"},
        {"decision": "failed", "note": "The report is forged.", "by": s.person1.value, "history": []},
    )
    equal("work items", ended["workItems"], [])


@check("ending.rejected", "spec §3.2, §3.4 (rejected without on_reject ends the run)")
async def rejected(s: Session) -> None:
    run_id = (await s.start("conform-sign", {"amount": 10}))["run"]["id"]
    view = await s.work(run_id, "prepare", {"amount": 10})
    ended = await s.decide(s.person1, view, "sign", "rejected", note="Not this quarter.")
    equal("run", (ended["run"]["state"], ended["run"]["outcome"]), ("ended", "rejected"))
    equal(
        "ended",
        {k: v for k, v in ended["run"]["ended"].items() if k != "at"},
        {"by": s.person1.value, "note": "Not this quarter."},
    )
    equal(
        "sign's record",
        {k: v for k, v in ended["data"]["steps"]["sign"].items() if k != "at"},
        {"decision": "rejected", "note": "Not this quarter.", "by": s.person1.value, "history": []},
    )
    equal("states", states(ended), {"prepare": "done", "sign": "done", "signed": None})


@check("ending.escalation-failed", "spec §3.4 (failed on an escalated agent step), §3.5")
async def escalation_failed(s: Session) -> None:
    run_id = (await s.start("conform-chain", {"title": "Memo"}))["run"]["id"]
    claimed = await s.claim(run_id, "draft")
    view = await s.ok(s.agent, "escalate", token=claimed["token"], note="No source material.")
    ended = await s.decide(s.operator, view, "draft", "failed", note="Nothing to draft from.")
    equal(
        "ended",
        {k: v for k, v in ended["run"]["ended"].items() if k != "at"},
        {"by": s.operator.value, "note": "Nothing to draft from."},
    )
    equal("draft", states(ended)["draft"], "failed")
    equal(
        "draft's record",
        {k: v for k, v in ended["data"]["steps"]["draft"].items() if k != "at"},
        {"decision": "failed", "note": "Nothing to draft from.", "by": s.operator.value, "history": []},
    )


@check("ending.person-nobody", "spec §3.4 (a person path that resolves to nothing fails the run), §3.5")
async def person_nobody(s: Session) -> None:
    if s.described["person"]["format"] != "email":
        raise CheckSkipped(
            f"person format {s.described['person']['format']!r}: the runner writes only email values"
        )
    view = await s.start("conform-desk", {"ticket": "T-1", "owner": "nobody@conform.invalid"}, s.person1)
    ended = await s.work(view["run"]["id"], "triage", {"priority": "high"})
    equal(
        "run",
        (ended["run"]["state"], ended["run"]["outcome"], ended["run"]["ended"]["by"]),
        ("ended", "failed", "server"),
    )
    note = ended["run"]["ended"]["note"]
    true(
        isinstance(note, str) and bool(note.strip()), f"ended.note: expected why the run failed, got {note!r}"
    )
    equal("fix", states(ended)["fix"], "failed")
    equal(
        "fix's record",
        {k: v for k, v in ended["data"]["steps"]["fix"].items() if k != "at"},
        {"decision": "failed", "note": note, "by": "server", "history": []},
    )


@check("ending.reads", "spec §4.1 (get_run, list_runs: anyone in the organization)")
async def reads(s: Session) -> None:
    """Anyone in the organization reads a run, ended or not."""
    view = await vendor_at_approval(s)
    run_id = view["run"]["id"]
    await s.decide(s.person1, view, "approve", "approved")
    for who in (s.agent2, s.person2, s.outsider, s.operator):
        equal(f"get_run as {who.name}", (await s.view(run_id, who))["run"]["state"], "ended")
    listed = [
        i
        for i in await s.everything(
            s.outsider, "list_runs", process="conform-vendor", state="ended", limit=100
        )
        if i["id"] == run_id
    ]
    equal(
        "list_runs of the ended run", [(i["state"], i["outcome"]) for i in listed], [("ended", "onboarded")]
    )
