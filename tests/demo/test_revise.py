"""Reading `check:` lines and reconsidering exactly the fields each question is about."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from console.demo.revise import (
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
from console.demo.routes import Choice
from console.demo.work import draft
from engine.document import load_path
from engine.document.fields import check_values, parse_fields
from tests.demo.demo_support import SAMPLES

NOW = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)
VERDICT = "The eligible verdict agrees with the quoted policy clause, the reason and the days since delivery."
DATA_MAP = "Every system in the data map appears in deletedFrom, or in keptRecords with a legal basis named."
POLICY = "Refund policy: damaged, wrong_item, duplicate_charge: refund in full."


def body_of(name: str) -> str:
    process = load_path(SAMPLES / name).process
    assert process is not None
    return process.body


REFUND_BODY = body_of("customer-refund")
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
    misjudged = draft(VERIFY, random.Random(1), NOW, (), misjudge=True)
    assert (misjudged.output["eligible"], misjudged.choice and misjudged.choice.to) == (False, "send_decline")
    assert misjudged.output["approvedAmount"] == 1718.2
    revision = revise(misjudged, [CheckLine(VERDICT, "no (0.15)")], random.Random(1), REFUND, turn_over=True)
    work = revision.work
    assert work.output == {
        **misjudged.output,
        "eligible": True,
        "approvedAmount": 86.27,
        "policyClause": POLICY,
    }
    assert work.choice == Choice(
        "issue_refund", "Eligible and 100 or less", "Chose issue_refund: Eligible and 100 or less."
    )
    assert check_values(work.fields, work.output, "output") == []
    assert (revision.reconsidered, revision.changed, revision.route_changed) == (
        ("eligible", "daysSinceDelivery", "policyClause"),
        ("eligible", "approvedAmount", "policyClause"),
        True,
    )
    assert revision.sentence() == (
        f"Revised after the model check answered '{VERDICT}' → no (0.15). "
        "Reconsidered eligible, daysSinceDelivery and policyClause: eligible is now true, "
        "approvedAmount is now 86.27, policyClause rewritten, the route is now issue_refund."
    )


def test_a_verdict_is_not_turned_over_without_the_work_that_was_judged_or_a_no() -> None:
    work = draft(VERIFY, random.Random(1), NOW, (), misjudge=True)
    fresh = revise(work, [CheckLine(VERDICT, "no (0.15)")], random.Random(2), REFUND, turn_over=False)
    unsure = revise(work, [CheckLine(VERDICT, "yes (0.7)")], random.Random(2), REFUND, turn_over=True)
    for revision in (fresh, unsure):
        assert (revision.work.output["eligible"], revision.changed, revision.route_changed) == (
            False,
            ("policyClause",),
            False,
        )


def test_a_list_the_question_names_gains_what_the_data_map_holds() -> None:
    work = draft(DELETE, random.Random(3), NOW, ())
    assert work.output == {"deletedFrom": ["Deleted from 76"], "purgeAt": "2026-10-06T09:13:00Z"}
    data = {
        "steps": {"locate_data": {"output": {"recordsFound": [{"system": "crm"}, {"system": "payroll"}]}}}
    }
    revision = revise(
        work, [CheckLine(DATA_MAP, "no (0.3)")], random.Random(0), Context(data), turn_over=True
    )
    assert revision.work.output == {**work.output, "deletedFrom": ["Deleted from 76", "crm", "payroll"]}
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
    work = draft({"output": {"orderId": "string", "findings": "string"}}, random.Random(0), NOW, ())
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
