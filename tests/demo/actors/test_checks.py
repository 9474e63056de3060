"""Demo agents and the demo operator against a server whose model checks are scripted: a refusal is
reconsidered and fixed, a check that keeps refusing is escalated, and an unsure verdict's held
submission is completed as it stands, edited, or returned once and then edited."""

from __future__ import annotations

import json
from typing import Any

from demo.actors.agent import AgentBehaviour, DemoAgent
from demo.actors.link import EngineLink
from demo.actors.people import DemoPeople, PeopleBehaviour
from demo.world.org import DemoOrg
from demo.world.pace import ManualPace
from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity, agent, person
from tests.demo.demo_support import AGENT_A, AGENT_B, MIRA, OPERATOR, make_org, rid, schema_problems

CAREFUL = AgentBehaviour(
    work_minutes=(3, 3),
    parts=3,
    long_work_minutes=10,
    escalate_share=0,
    incomplete_share=0,
    lapse_share=0,
    misjudge_share=0,
)
HASTY = AgentBehaviour(**{**CAREFUL.__dict__, "misjudge_share": 1})
VERDICT = "The eligible verdict agrees with the quoted policy clause, the reason and the days since delivery."
SUMMARY_ASK = "What does decisionSummary tell a support agent?"
VETTING_ASK = "The findings and listsSearched cover both the OFAC and the EU list."
POLICY = "Refund policy: damaged, wrong_item, duplicate_charge: refund in full."
CHANGED_MIND = (
    "Refund policy: changed_mind: refund the item price, without shipping, within 30 days of delivery."
)
FIRST_SENTENCE = "Done: Find the order in Shopify."
OPERATOR_ID = Identity("person", OPERATOR, operator=True)
ONLY_HOLDS = PeopleBehaviour(
    think_minutes=(5, 5),
    slow_share=0,
    reject_share=0,
    return_share=0,
    check_return_share=0,
    check_edit_share=0,
)


def bot(engine: Engine, clock: ManualClock, behaviour: AgentBehaviour, name: str = AGENT_A) -> DemoAgent:
    return DemoAgent(
        name, lambda: EngineLink(engine, agent(name)), ManualPace(clock), behaviour=behaviour, seed=4
    )


def operator(engine: Engine, clock: ManualClock, behaviour: PeopleBehaviour) -> DemoPeople:
    org = DemoOrg(
        make_org(), {}, (AGENT_A,), operator_email=OPERATOR, person_pool=(MIRA,), event_feed_id=AGENT_B
    )
    return DemoPeople(engine, org, ManualPace(clock), behaviour=behaviour, seed=3)


async def start(engine: Engine, process: str, inputs: dict[str, Any]) -> str:
    started = await engine.call(
        person(MIRA), "start_run", {"process": process, "inputs": inputs, "requestId": rid()}
    )
    assert started["ok"], started
    return started["data"]["run"]["id"]


def refund(reason: str) -> dict[str, Any]:
    return {
        "orderId": "10482",
        "customerEmail": "jordan.lee@example.net",
        "requestedAmount": 80,
        "reason": reason,
        "ticketUrl": "https://support.example.com/tickets/5531",
    }


async def view(engine: Engine, run_id: str) -> dict[str, Any]:
    result = await engine.call(OPERATOR_ID, "get_run", {"runId": run_id})
    assert result["ok"], result
    return result["data"]


def states(data: dict[str, Any]) -> dict[str, str | None]:
    return {s["id"]: s["state"] for s in data["steps"]}


def shown(output: dict[str, Any]) -> str:
    """The `Recorded ...` sentence of a summary for `output`."""
    values = [json.dumps(v) for v in list(output.values())[:3]]
    cut = [v if len(v) <= 40 else v[:39] + "…" for v in values]
    return ", ".join(f"{k} = {v}" for k, v in zip(list(output)[:3], cut, strict=True))


def verdict_of(output: dict[str, Any], route: str) -> str:
    """The decisionSummary a revision or an edit writes for this output and route."""
    facts = [
        f"{k} {'yes' if v else 'no'}" if isinstance(v, bool) else f"{k} {int(v) if v == int(v) else v}"
        for k, v in output.items()
        if k != "decisionSummary" and isinstance(v, bool | int | float)
    ]
    when = {
        "issue_refund": "Eligible and 100 or less",
        "lead_approval": "Eligible and over 100",
        "send_decline": "Not eligible under the policy",
    }[route]
    return f"Verdict: {', '.join(facts)}. Chose {route}: {when}."


async def test_a_misjudged_verdict_refused_by_the_check_is_reconsidered_and_passes(
    checked: Engine, clock: ManualClock
) -> None:
    run_id = await start(checked, "customer-refund", refund("damaged"))
    hasty = bot(checked, clock, HASTY)
    assert await hasty.work_once() is True
    data = await view(checked, run_id)
    record = data["data"]["steps"]["verify_order"]
    output = record["output"]
    assert (hasty.state.refused, hasty.state.check_refused, hasty.state.check_fixed) == (1, 1, 1)
    assert (hasty.state.submitted, hasty.state.held, hasty.state.escalated) == (1, 0, 0)
    assert (output["eligible"], record["next"], output["approvedAmount"] > 100) == (
        True,
        "lead_approval",
        True,
    )
    assert output["policyClause"] == POLICY
    assert record["check"]["verdict"] == "pass"
    assert [q["result"] for q in record["check"]["questions"]] == ["pass", "pass", "pass"]
    assert list(hasty.state.recent) == [
        "connected (core-2, lease 600s)",
        "claimed customer-refund · verify_order",
        "check refused: no (0.15); fixing",
        "submitted verify_order → lead_approval",
    ]
    assert "daysSinceDelivery" not in output, "seeded: the draft left the optional field out"
    assert (
        record["summary"]
        == hasty.last_summary
        == (
            f"{FIRST_SENTENCE} Recorded {shown(output)}. Chose lead_approval: Eligible and over 100. "
            f"Revised after the model check answered '{VERDICT}' → no (0.15). "
            "Reconsidered eligible and policyClause: eligible is now true, policyClause rewritten, "
            "the route is now lead_approval."
        )
    )
    assert states(data)["verify_order"] == "done"
    assert schema_problems(data) == []


async def test_a_check_that_keeps_refusing_is_escalated_after_max_fixes(
    checked: Engine, clock: ManualClock
) -> None:
    run_id = await start(checked, "vetting", {"vendorName": "Globex Supplies"})
    stubborn = bot(checked, clock, CAREFUL)
    assert await stubborn.work_once() is True
    assert (stubborn.state.refused, stubborn.state.check_refused, stubborn.state.submitted) == (3, 3, 0)
    assert stubborn.state.escalated == 1
    assert list(stubborn.state.recent)[2:] == [
        "check refused: no (0.2); fixing",
        "check refused: no (0.2); fixing",
        "check refused: no (0.2); giving up",
        f"escalated vet: the model check still answers no (0.2) to '{VETTING_ASK[:-1]}'"[:160],
    ]
    queue = await checked.call(OPERATOR_ID, "get_work", {})
    [entry] = queue["data"]["items"]
    item = entry["workItem"]
    assert item["escalation"]["note"] == (
        f"Cannot finish vet: the model check still answers no (0.2) to '{VETTING_ASK[:-1]}'. "
        "What I did: Reconsidered the output 2 times from the check's questions. "
        "A person needs to check the record and either return the step with directions or complete it."
    )
    assert item["handoff"]["issues"] == [f"check: {VETTING_ASK} → no (0.2)"]
    assert item["handoff"]["check"]["verdict"] == "fail"

    deciders = operator(checked, clock, PeopleBehaviour(**{**ONLY_HOLDS.__dict__, "return_share": 1}))
    assert await deciders.poll() == 0
    clock.advance(minutes=5)
    assert await deciders.poll() == 1
    assert dict(deciders.decisions) == {"agent:completed": 1}, "a check the agent gave up on is not sent back"
    data = await view(checked, run_id)
    assert (data["run"]["outcome"], data["data"]["steps"]["vet"]["by"]) == ("vetted", OPERATOR)
    assert "check" not in data["data"]["steps"]["vet"], "a person completing an escalated step is not checked"
    assert schema_problems(data) == []


async def test_the_next_claimant_reads_the_check_in_the_handoff_and_reconsiders(
    checked: Engine, clock: ManualClock
) -> None:
    run_id = await start(checked, "customer-refund", refund("duplicate_charge"))
    giving_up = bot(checked, clock, AgentBehaviour(**{**HASTY.__dict__, "max_fixes": 0}))
    assert await giving_up.work_once() is True
    assert (giving_up.state.check_refused, giving_up.state.escalated) == (1, 1)
    [entry] = (await checked.call(OPERATOR_ID, "get_work", {}))["data"]["items"]
    returned = await checked.call(
        OPERATOR_ID,
        "decide",
        {
            **entry["workItem"]["decide"]["arguments"],
            "decision": "returned",
            "note": "Read the policy again.",
            "requestId": rid(),
        },
    )
    assert returned["ok"], returned

    careful = bot(checked, clock, CAREFUL, AGENT_B)
    assert await careful.work_once() is True
    handoff = careful.last_handoff
    assert handoff is not None
    assert (handoff.issues, handoff.check_verdict, handoff.returned_note) == (
        (f"check: {VERDICT} → no (0.15)",),
        "fail",
        "Read the policy again.",
    )
    assert (
        careful.state.recent[1]
        == "claimed customer-refund · verify_order (handoff: issues, returned note, check)"
    )
    record = (await view(checked, run_id))["data"]["steps"]["verify_order"]
    assert record["output"]["policyClause"] == POLICY
    assert careful.last_summary is not None
    named = "eligible, daysSinceDelivery and" if "daysSinceDelivery" in record["output"] else "eligible and"
    assert careful.last_summary.endswith(
        f"Returned by {OPERATOR} with the note 'Read the policy again.'; followed it. "
        f"Revised after the model check answered '{VERDICT}' → no (0.15). "
        f"Reconsidered {named} policyClause: policyClause rewritten."
    ), "the question names the verdict, the days since delivery (when given) and the clause"
    assert "eligible is now" not in careful.last_summary, "a fresh draft's verdict is its own judgement"


async def held(engine: Engine, clock: ManualClock) -> tuple[str, dict[str, Any]]:
    """A changed-mind refund whose summary the check is unsure of: held for a person."""
    run_id = await start(engine, "customer-refund", refund("changed_mind"))
    worker = bot(engine, clock, CAREFUL)
    assert await worker.work_once() is True
    assert (worker.state.submitted, worker.state.held, worker.state.check_refused) == (1, 1, 0)
    assert worker.state.last_action.endswith("; the check is unsure: held for a person")
    [entry] = (await engine.call(OPERATOR_ID, "get_work", {}))["data"]["items"]
    escalation = entry["workItem"]["escalation"]
    assert (escalation["by"], escalation["note"]) == ("server", f"check: {SUMMARY_ASK} → partial (0.9)")
    assert escalation["check"]["verdict"] == "unsure"
    return run_id, escalation["candidate"]


async def decide_held(engine: Engine, clock: ManualClock, behaviour: PeopleBehaviour) -> DemoPeople:
    deciders = operator(engine, clock, behaviour)
    assert await deciders.poll() == 0
    clock.advance(minutes=5)
    assert await deciders.poll() == 1
    return deciders


async def test_the_operator_completes_a_held_submission_as_it_stands(
    checked: Engine, clock: ManualClock
) -> None:
    run_id, candidate = await held(checked, clock)
    deciders = await decide_held(checked, clock, ONLY_HOLDS)
    assert dict(deciders.decisions) == {"check:completed": 1}
    data = await view(checked, run_id)
    record = data["data"]["steps"]["verify_order"]
    assert (record["output"], record["summary"], record["next"]) == (
        candidate["output"],
        candidate["summary"],
        candidate["next"],
    )
    assert (record["by"], record["check"]["verdict"]) == (OPERATOR, "unsure")
    assert states(data)["verify_order"] == "done"
    assert schema_problems(data) == []


async def test_the_operator_edits_what_the_unsure_question_names(checked: Engine, clock: ManualClock) -> None:
    run_id, candidate = await held(checked, clock)
    deciders = await decide_held(
        checked, clock, PeopleBehaviour(**{**ONLY_HOLDS.__dict__, "check_edit_share": 1})
    )
    assert dict(deciders.decisions) == {"check:edited": 1}
    data = await view(checked, run_id)
    record = data["data"]["steps"]["verify_order"]
    rewritten = f"{verdict_of(candidate['output'], candidate['next'])} Policy applied: {CHANGED_MIND}"
    assert record["output"] == {**candidate["output"], "decisionSummary": rewritten}, (
        "the operator read the run, so the rewrite quotes the policy line its inputs fall under"
    )
    assert record["summary"] == (
        f"Completed by {OPERATOR} from the held submission, with decisionSummary rewritten "
        "after the check was unsure: partial (0.9)."
    )
    assert (record["next"], record["reason"], record["evidence"]) == (
        candidate["next"],
        candidate["reason"],
        candidate["evidence"],
    )
    assert (record["by"], record["check"]["verdict"]) == (OPERATOR, "unsure")
    assert schema_problems(data) == []


async def test_a_held_submission_returned_once_comes_back_and_is_then_edited(
    checked: Engine, clock: ManualClock
) -> None:
    run_id, _candidate = await held(checked, clock)
    once = PeopleBehaviour(**{**ONLY_HOLDS.__dict__, "check_return_share": 1})
    deciders = await decide_held(checked, clock, once)
    assert dict(deciders.decisions) == {"check:returned": 1}
    data = await view(checked, run_id)
    assert states(data)["verify_order"] == "ready"
    assert "verify_order" not in data["data"]["steps"], "the hold is released"

    again = bot(checked, clock, CAREFUL, AGENT_B)
    assert await again.work_once() is True
    assert again.last_handoff is not None and again.last_handoff.returned_note == (
        f"The check was unsure: '{SUMMARY_ASK}' (partial (0.9)). "
        "Rework decisionSummary so it answers that plainly, then submit again."
    )
    assert again.state.held == 1, "the changed-mind summary still reads as partial"
    assert again.last_summary is not None and again.last_summary.endswith(
        f"Revised after the model check answered '{SUMMARY_ASK}' → partial (0.9). "
        "Reconsidered decisionSummary: decisionSummary rewritten."
    )
    [entry] = (await checked.call(OPERATOR_ID, "get_work", {}))["data"]["items"]
    candidate = entry["workItem"]["escalation"]["candidate"]
    assert candidate["output"]["decisionSummary"] == (
        f"{verdict_of(candidate['output'], candidate['next'])} Policy applied: {CHANGED_MIND}"
    )
    assert await deciders.poll() == 0
    clock.advance(minutes=5)
    assert await deciders.poll() == 1
    assert dict(deciders.decisions) == {"check:returned": 1, "check:edited": 1}, (
        "returned once; the next hold is edited, since it cannot go back again"
    )
    data = await view(checked, run_id)
    record = data["data"]["steps"]["verify_order"]
    assert record["output"]["decisionSummary"] == (
        f"{verdict_of(candidate['output'], candidate['next'])} Policy applied: {CHANGED_MIND}"
    )
    assert states(data)["verify_order"] == "done"
    assert schema_problems(data) == []
