"""Every conformance fixture the engine publishes, driven through `engine.call` to each finish outcome,
along each route the fixture offers (routes, rework, waits, events, timeouts, fork and join)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity
from tests.engine.engine_support import FIXTURES, MIRA, OPS, SCREENER, Driver, call, ok, sample_value, start
from tests.engine.tools.test_publishing import bind_all

pytestmark = pytest.mark.both_stores

CASES: list[tuple[str, dict[str, list[str]], Identity, list[tuple[str, str]]]] = [
    (
        "blog-publication",
        {"editor_review": ["rejected", "approved"]},
        SCREENER,
        [
            ("draft", "done"),
            ("editor_review", "rejected"),
            ("draft", "done"),
            ("editor_review", "approved"),
            ("publish", "done"),
        ],
    ),
    (
        "contract-review",
        {},
        SCREENER,
        [
            ("prepare", "completed"),
            ("legal_review", "approved"),
            ("finance_review", "approved"),
            ("sign", "completed"),
        ],
    ),
    (
        "customer-offboarding",
        {"final_invoice": ["deletion_clearance"]},
        SCREENER,
        [
            ("authorize", "approved"),
            ("cancel_services", "done"),
            ("final_invoice", "deletion_clearance"),
            ("deletion_clearance", "completed"),
            ("delete_data", "done"),
            ("verify_deletion", "completed"),
        ],
    ),
    (
        "customer-offboarding",
        {"final_invoice": ["settlement_event"], "verify_settlement": ["deletion_clearance"]},
        SCREENER,
        [
            ("authorize", "approved"),
            ("cancel_services", "done"),
            ("final_invoice", "settlement_event"),
            ("settlement_event", "event"),
            ("verify_settlement", "deletion_clearance"),
            ("deletion_clearance", "completed"),
            ("delete_data", "done"),
            ("verify_deletion", "completed"),
        ],
    ),
    (
        "customer-offboarding",
        {"final_invoice": ["settlement_event"], "settlement_event": ["timeout"]},
        SCREENER,
        [
            ("authorize", "approved"),
            ("cancel_services", "done"),
            ("final_invoice", "settlement_event"),
            ("finance_followup", "completed"),
            ("deletion_clearance", "completed"),
            ("delete_data", "done"),
            ("verify_deletion", "completed"),
        ],
    ),
    (
        "employee-onboarding",
        {"confirm_ready": ["rejected", "approved"]},
        SCREENER,
        [
            ("hr_setup", "completed"),
            ("access_plan", "completed"),
            ("it_setup", "completed"),
            ("welcome", "done"),
            ("confirm_ready", "rejected"),
            ("access_plan", "completed"),
            ("it_setup", "completed"),
            ("welcome", "done"),
            ("confirm_ready", "approved"),
        ],
    ),
    (
        "expense-reimbursement",
        {},
        MIRA,
        [
            ("receipts", "completed"),
            ("check", "done"),
            ("manager_review", "approved"),
            ("reimburse", "completed"),
        ],
    ),
    (
        "incident-postmortem",
        {"review": ["rejected", "rejected", "approved"]},
        SCREENER,
        [
            ("draft", "done"),
            ("review", "rejected"),
            ("draft", "done"),
            ("review", "rejected"),
            ("draft", "done"),
            ("review", "approved"),
            ("register_actions", "done"),
            ("track_closure", "completed"),
        ],
    ),
    *(
        (
            "invoice-approval",
            {"validate": [tier]},
            SCREENER,
            [("validate", tier), (tier, "approved"), ("record", "done")],
        )
        for tier in ("manager_review", "finance_review", "cfo_review")
    ),
    (
        "major-incident-response",
        {},
        SCREENER,
        [
            ("activate", "done"),
            ("operations", "completed"),
            ("security", "completed"),
            ("communications", "completed"),
            ("close_review", "approved"),
        ],
    ),
    (
        "major-incident",
        {"close_review": ["rejected", "approved"]},
        SCREENER,
        [
            ("activate", "done"),
            ("operations", "completed"),
            ("security", "completed"),
            ("communications", "completed"),
            ("close_review", "rejected"),
            ("operations", "completed"),
            ("security", "completed"),
            ("communications", "completed"),
            ("close_review", "approved"),
        ],
    ),
    (
        "supplier-rfp",
        {"select": ["rejected", "approved"]},
        SCREENER,
        [
            ("collect_quotes", "completed"),
            ("compare", "done"),
            ("select", "rejected"),
            ("collect_quotes", "completed"),
            ("compare", "done"),
            ("select", "approved"),
            ("record_selection", "done"),
        ],
    ),
    (
        "support-escalation",
        {"diagnose": ["confirm"]},
        SCREENER,
        [("diagnose", "confirm"), ("confirm", "approved"), ("close_ticket", "done")],
    ),
    (
        "support-escalation",
        {"diagnose": ["tier1_handoff"], "confirm": ["rejected", "approved"]},
        SCREENER,
        [
            ("diagnose", "tier1_handoff"),
            ("tier1_handoff", "completed"),
            ("engineering", "completed"),
            ("confirm", "rejected"),
            ("tier1_handoff", "completed"),
            ("engineering", "completed"),
            ("confirm", "approved"),
            ("close_ticket", "done"),
        ],
    ),
]

OUTCOMES = {
    "blog-publication": "published",
    "contract-review": "signed",
    "customer-offboarding": "offboarded",
    "employee-onboarding": "ready",
    "expense-reimbursement": "reimbursed",
    "incident-postmortem": "closed",
    "invoice-approval": "approved",
    "major-incident-response": "stabilized",
    "major-incident": "stabilized",
    "supplier-rfp": "selected",
    "support-escalation": "resolved",
}


def inputs_for(declared: dict[str, Any]) -> dict[str, Any]:
    return {name: sample_value(spec) for name, spec in declared.items()}


@pytest.mark.parametrize(
    ("fixture", "plan", "starter", "trace"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
async def test_fixture_reaches_its_finish_outcome(
    engine: Engine,
    clock: ManualClock,
    fixture: str,
    plan: dict[str, list[str]],
    starter: Identity,
    trace: list[tuple[str, str]],
) -> None:
    folder = FIXTURES / fixture
    assert (await engine.publish(folder, bind_all(folder))).ok
    [listed] = [
        p
        for p in ok(await call(engine, OPS, "list_processes"), "list_processes")["items"]
        if p["name"] == fixture
    ]
    view = await start(engine, fixture, inputs_for(listed["inputs"]), who=starter)
    driver = Driver(engine, clock, plan, events={"settlement_event": "final-invoice-settled"})
    final = await driver.drive(view["run"]["id"])
    assert (final["run"]["state"], final["run"]["outcome"]) == ("ended", OUTCOMES[fixture])
    assert final["run"]["ended"]["by"] == "server" and final["run"]["ended"]["note"] is None
    assert final["workItems"] == []
    assert driver.trace == trace


def test_every_publishable_fixture_has_a_case() -> None:
    published = {p.name for p in FIXTURES.iterdir() if p.is_dir()} - {"vendor-check"}
    assert {c[0] for c in CASES} == published == set(OUTCOMES)
