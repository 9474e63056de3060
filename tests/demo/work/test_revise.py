"""Reading `check:` lines and reconsidering exactly the fields each question is about."""

from __future__ import annotations

import json
import random
from typing import Any

from demo.work.draft import Draft, draft
from demo.work.revise import (
    CheckLine,
    Context,
    check_lines,
    edited_output,
    is_text,
    named_fields,
    policy_line,
    revise,
    run_data_values,
    statement,
)
from demo.work.routes import Choice
from demo.world.relations import Relations
from engine.document import load_path
from engine.document.fields import check_values, parse_fields
from tests.demo.demo_support import SAMPLES, scene

VERDICT = "The eligible verdict agrees with the quoted policy clause, the reason and the days since delivery."
DATA_MAP = "Every system in the data map appears in deletedFrom, or in keptRecords with a legal basis named."
POLICY = "Refund policy: damaged, wrong_item, duplicate_charge: refund in full."


def body_of(name: str) -> str:
    process = load_path(SAMPLES / name).process
    assert process is not None
    return process.body


REFUND_BODY = body_of("customer-refund")
RELATIONS = Relations.load(SAMPLES / "demo-relations.toml")
VERIFY: dict[str, Any] = {
    "id": "verify_order",
    "output": {
        "eligible": "boolean",
        "orderTotal": "number",
        "approvedAmount": "number",
        "daysSinceDelivery": {"type": "number", "optional": True},
        "policyClause": "string",
        "decisionSummary": "string",
    },
    "evidence": ["link"],
    "next": [
        {"to": "issue_refund", "when": "Eligible and 100 or less"},
        {"to": "lead_approval", "when": "Eligible and over 100"},
        {"to": "send_decline", "when": "Not eligible under the policy"},
    ],
}
DELETE = {
    "id": "delete_data",
    "output": {
        "deletedFrom": {"type": "list", "items": "string"},
        "keptRecords": {"type": "list", "optional": True, "items": "string"},
        "purgeAt": "datetime",
    },
    "evidence": ["file"],
    "next": "await_purge",
}
REFUND = Context({"inputs": {"orderId": "10482", "reason": "damaged"}, "steps": {}}, REFUND_BODY)


def drafted(requirements: dict[str, Any], seed: int, *, misjudge: bool = False) -> Draft:
    """A draft with no relations file: the route chosen first, the output made to agree with it."""
    step_id = str(requirements.get("id", "x"))
    return draft(requirements, random.Random(seed), scene(seed=f"{seed}"), step_id=step_id, misjudge=misjudge)


def test_check_lines_are_read_from_issues_and_written_back_the_same() -> None:
    issues = [
        "output.total: missing",
        f"check: {VERDICT} → no (0.15)",
        "check: What does decisionSummary tell a support agent? → partial (0.9)",
        "check: How well is approvedAmount supported? → level 1: The amount is stated (0.9)",
    ]
    lines = check_lines(issues)
    assert [(line.ask, line.answer, line.said_no) for line in lines] == [
        (VERDICT, "no (0.15)", True),
        ("What does decisionSummary tell a support agent?", "partial (0.9)", False),
        ("How well is approvedAmount supported?", "level 1: The amount is stated (0.9)", False),
    ]
    assert [str(line) for line in lines] == issues[1:]
    assert CheckLine.parse("check: no arrow here") is None
    assert CheckLine.parse(f"check: {VERDICT} → yes (0.7)") == CheckLine(VERDICT, "yes (0.7)")


def test_a_question_names_fields_by_name_or_in_words() -> None:
    fields, _ = parse_fields(VERIFY["output"], "output")
    names = lambda ask: [f.name for f in named_fields(ask, fields)]  # noqa: E731
    assert names(VERDICT) == ["eligible", "daysSinceDelivery", "policyClause"]
    assert names("What does decisionSummary tell a support agent?") == ["decisionSummary"]
    assert names("How well is approvedAmount supported by the order facts in the output?") == [
        "approvedAmount"
    ]
    assert names("Is the tone kind?") == []


def test_the_policy_line_is_the_list_item_the_inputs_fall_under() -> None:
    assert policy_line(REFUND) == POLICY
    assert policy_line(Context({"inputs": {"reason": "not_received"}}, REFUND_BODY)) == (
        "Refund policy: not_received: refund in full when the carrier shows no delivery 10 days after shipping."
    )
    assert policy_line(Context({"inputs": {"reason": "lost"}}, REFUND_BODY)) is None
    assert policy_line(Context({"inputs": {"reason": "damaged"}}, "")) is None


def test_a_statement_quotes_the_policy_or_states_the_verdict() -> None:
    fields, _ = parse_fields(VERIFY["output"], "output")
    by_name = {f.name: f for f in fields}
    output = {"eligible": True, "orderTotal": 120.0, "approvedAmount": 84.5, "policyClause": "x"}
    choice = Choice(
        "issue_refund", "Eligible and 100 or less", "Chose issue_refund: Eligible and 100 or less."
    )
    assert statement(by_name["policyClause"], output, choice, REFUND) == POLICY
    assert statement(by_name["decisionSummary"], output, choice, REFUND) == (
        "Verdict: eligible yes, orderTotal 120, approvedAmount 84.5. "
        f"Chose issue_refund: Eligible and 100 or less. Policy applied: {POLICY}"
    )
    assert statement(by_name["policyClause"], output, None, Context({})) == (
        "Verdict: eligible yes, orderTotal 120, approvedAmount 84.5."
    )


def test_values_the_question_names_are_found_in_earlier_outputs() -> None:
    found = [
        {"system": "crm", "table": "contacts", "recordCount": 3},
        {"system": "billing-db", "table": "invoices", "recordCount": 12},
        {"system": "crm", "table": "notes", "recordCount": 1},
    ]
    data = {
        "inputs": {"system": "not an output"},
        "steps": {
            "locate_data": {"output": {"recordsFound": found}, "summary": "system map", "by": "agent-a"},
            "send_verification": {"output": {"verificationSentAt": "2026-10-06T09:00:00Z"}},
        },
    }
    assert run_data_values(DATA_MAP, Context(data)) == ["crm", "billing-db"]
    assert run_data_values("Is the summary clear?", Context(data)) == []


def test_a_refused_verdict_is_turned_over_and_the_route_follows_it() -> None:
    misjudged = drafted(VERIFY, 1, misjudge=True)
    assert (misjudged.output["eligible"], misjudged.choice and misjudged.choice.to) == (False, "send_decline")
    revision = revise(misjudged, [CheckLine(VERDICT, "no (0.15)")], random.Random(1), REFUND, turn_over=True)
    work = revision.work
    assert work.choice is not None and work.choice.to in ("issue_refund", "lead_approval")
    amount = work.output["approvedAmount"]
    assert amount <= 100 if work.choice.to == "issue_refund" else amount > 100, "the amount follows the route"
    assert work.output == {
        **misjudged.output,
        "eligible": True,
        "approvedAmount": amount,
        "policyClause": POLICY,
    }
    assert check_values(work.fields, work.output, "output") == []
    changed: tuple[str, ...] = ("eligible", "approvedAmount", "policyClause")
    if amount == misjudged.output["approvedAmount"]:
        changed = ("eligible", "policyClause")
    assert (revision.reconsidered, revision.changed, revision.route_changed) == (
        ("eligible", "daysSinceDelivery", "policyClause"),
        changed,
        True,
    )
    amount_said = f"approvedAmount is now {json.dumps(amount)}, " if "approvedAmount" in changed else ""
    assert revision.sentence() == (
        f"Revised after the model check answered '{VERDICT}' → no (0.15). "
        "Reconsidered eligible, daysSinceDelivery and policyClause: eligible is now true, "
        f"{amount_said}policyClause rewritten, the route is now {work.choice.to}."
    )


def refund_scene(reason: str, requested: float, seed: str = "1:r_1") -> Any:
    """A customer-refund run as the relations file draws it."""
    inputs = {"orderId": "10482", "customerEmail": "ana.ruiz@example.net", "requestedAmount": requested}
    return scene(
        "customer-refund",
        data={"inputs": {**inputs, "reason": reason}, "steps": {}},
        body=REFUND_BODY,
        relations=RELATIONS,
        seed=seed,
    )


def test_with_the_relations_a_verdict_turned_over_brings_back_the_amount_the_facts_give() -> None:
    facts = refund_scene("damaged", 480.0)
    misjudged = draft(VERIFY, random.Random(1), facts, step_id="verify_order", misjudge=True)
    total = misjudged.output["orderTotal"]
    assert 480.0 <= total <= 768.0
    assert misjudged.output == {
        "eligible": False,
        "orderTotal": total,
        "approvedAmount": 0,
        "daysSinceDelivery": misjudged.output["daysSinceDelivery"],
        "policyClause": POLICY,
        "decisionSummary": f"Not eligible: refund 0.00 of the {total:,.2f} order 10482 (damaged, "
        f"{misjudged.output['daysSinceDelivery']} days since delivery). {POLICY}",
    }
    assert misjudged.choice is not None and misjudged.choice.to == "send_decline"
    revision = revise(misjudged, [CheckLine(VERDICT, "no (0.15)")], random.Random(1), REFUND, turn_over=True)
    output = revision.work.output
    assert (output["eligible"], output["approvedAmount"], output["orderTotal"]) == (True, 480.0, total), (
        "a damaged order is refunded in full, and the order total is the same fact as before"
    )
    assert output["decisionSummary"].startswith(f"Eligible: refund 480.00 of the {total:,.2f} order 10482")
    assert revision.work.choice == Choice(
        "lead_approval", "Eligible and over 100", "Chose lead_approval: Eligible and over 100."
    )
    small = draft(VERIFY, random.Random(1), refund_scene("damaged", 60.0), step_id="verify_order")
    assert (small.output["approvedAmount"], small.choice and small.choice.to) == (60.0, "issue_refund")


def test_a_verdict_is_not_turned_over_without_the_work_that_was_judged_or_a_no() -> None:
    work = drafted(VERIFY, 1, misjudge=True)
    fresh = revise(work, [CheckLine(VERDICT, "no (0.15)")], random.Random(2), REFUND, turn_over=False)
    unsure = revise(work, [CheckLine(VERDICT, "yes (0.7)")], random.Random(2), REFUND, turn_over=True)
    for revision in (fresh, unsure):
        assert (revision.work.output["eligible"], revision.changed, revision.route_changed) == (
            False,
            ("policyClause",),
            False,
        )


def test_a_list_the_question_names_gains_what_the_data_map_holds() -> None:
    work = drafted(DELETE, 3)
    assert sorted(work.output) == ["deletedFrom", "purgeAt"]
    before = work.output["deletedFrom"]
    data = {
        "steps": {"locate_data": {"output": {"recordsFound": [{"system": "crm"}, {"system": "payroll"}]}}}
    }
    revision = revise(
        work, [CheckLine(DATA_MAP, "no (0.3)")], random.Random(0), Context(data), turn_over=True
    )
    assert revision.work.output == {**work.output, "deletedFrom": [*before, "crm", "payroll"]}
    assert revision.sentence() == (
        f"Revised after the model check answered '{DATA_MAP}' → no (0.3). "
        "Reconsidered deletedFrom: deletedFrom rewritten."
    )
    again = revise(
        revision.work, [CheckLine(DATA_MAP, "no (0.3)")], random.Random(0), Context(data), turn_over=True
    )
    assert again.changed == ()
    assert again.sentence().endswith(" Reconsidered deletedFrom: nothing needed changing.")


def test_a_person_edits_only_the_text_an_unsure_question_names() -> None:
    item = {"output": VERIFY["output"], "next": VERIFY["next"]}
    candidate: dict[str, Any] = {
        "output": {
            "eligible": True,
            "orderTotal": 120,
            "approvedAmount": 84.5,
            "policyClause": POLICY,
            "decisionSummary": "Refund ok.",
        },
        "next": "issue_refund",
    }
    summary_line = CheckLine("What does decisionSummary tell a support agent?", "partial (0.9)")
    assert edited_output(item, candidate, [summary_line], Context({})) == (
        {
            **candidate["output"],
            "decisionSummary": "Verdict: eligible yes, orderTotal 120, approvedAmount 84.5. "
            "Chose issue_refund: Eligible and 100 or less.",
        },
        ["decisionSummary"],
    )
    verdict_only = CheckLine("Is the eligible verdict right?", "yes (0.7)")
    assert edited_output(item, candidate, [verdict_only], Context({})) is None


def test_only_free_text_fields_are_rewritten() -> None:
    fields, _ = parse_fields(
        {
            "orderId": "string",
            "policyClause": "string",
            "decisionSummary": "string",
            "scope": {"type": "string", "one_of": ["full notes", "partial"]},
            "notes": {"type": "list", "items": "string"},
        },
        "output",
    )
    assert [f.name for f in fields if is_text(f)] == ["policyClause", "decisionSummary"]
    work = drafted({"output": {"orderId": "string", "findings": "string"}}, 0)
    revision = revise(
        work,
        [CheckLine("Do the findings match the orderId?", "no (0.1)")],
        random.Random(0),
        REFUND,
        turn_over=True,
    )
    assert revision.reconsidered == ("orderId", "findings")
    assert revision.changed == ("findings",)
    assert revision.work.output["orderId"] == work.output["orderId"]
