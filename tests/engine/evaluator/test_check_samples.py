"""Our sample processes that use `check` publish on a server with an evaluator, and the scripted demo
answers (sample_processes/check-answers.toml) let some submissions pass, fail others until fixed,
and send others to a person."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import document
from engine.clock import ManualClock
from engine.document.model import CHECK_PROFILE
from engine.evaluator import CheckLimits, Material, run_check
from engine.evaluator.scripted import ScriptedEvaluator
from engine.tools.checking import open_lines
from tests.engine.engine_support import MIRA, SAMPLES, SCREENER, call, claim, err, ok, start, step_states
from tests.engine.evaluator.engine_check_support import checked_engine

ANSWERS = SAMPLES / "check-answers.toml"
CHECKED = sorted(
    p
    for p in SAMPLES.iterdir()
    if (p / "PROCESS.md").is_file() and CHECK_PROFILE in document.load_path(p).profiles
)
NOW = ManualClock().now()

REFUND_YES_NO = (
    "The eligible verdict agrees with the quoted policy clause, the reason and the days since delivery."
)
REFUND_CHOICE = "What does decisionSummary tell a support agent?"
DELETION = "Every system in the data map appears in deletedFrom, or in keptRecords with a legal basis named."
APPEAL_RUBRIC = "How closely does policyAnalysis tie the cited policy to what the content shows?"
APPEAL_CHOICE = "Does policyAnalysis support the recommendation?"


def test_the_samples_with_check_are_the_three_the_readme_lists() -> None:
    assert [p.name for p in CHECKED] == [
        "content-moderation-appeal",
        "customer-refund",
        "data-deletion-request",
    ]


@pytest.mark.parametrize("folder", CHECKED, ids=[p.name for p in CHECKED])
async def test_a_sample_with_check_publishes_when_an_evaluator_is_configured(
    tmp_path: Path, clock: ManualClock, folder: Path
) -> None:
    evaluator = ScriptedEvaluator.load(ANSWERS)
    async with checked_engine(tmp_path, clock, evaluator) as engine:  # type: ignore[arg-type]
        process = document.load_path(folder).process
        assert process is not None
        result = await engine.publish(folder, {role: "g_finance" for role in process.roles})
    assert (result.ok, result.issues, result.version) == (True, [], 1)


@pytest.mark.parametrize(
    ("process", "step", "inputs", "output", "verdict", "effect", "lines"),
    [
        ("customer-refund", "verify_order", {"reason": "damaged"}, {"eligible": True}, "pass", "complete", []),
        ("customer-refund", "verify_order", {"reason": "damaged"}, {"eligible": False}, "fail", "not_accepted",
         [f"check: {REFUND_YES_NO} → no (0.15)"]),
        ("customer-refund", "verify_order", {"reason": "duplicate_charge"}, {"eligible": False}, "fail",
         "not_accepted", [f"check: {REFUND_YES_NO} → no (0.15)"]),
        ("customer-refund", "verify_order", {"reason": "not_received"}, {"eligible": True}, "unsure", "escalate",
         [f"check: {REFUND_YES_NO} → no (0.7)"]),
        ("customer-refund", "verify_order", {"reason": "not_received"}, {"eligible": False}, "pass", "complete", []),
        ("customer-refund", "verify_order", {"reason": "changed_mind"}, {"eligible": True}, "unsure", "escalate",
         [f"check: {REFUND_CHOICE} → partial (0.9)"]),
        ("data-deletion-request", "delete_data", {"jurisdiction": "EU"}, {"deletedFrom": ["stripe"]}, "pass",
         "complete", []),
        ("data-deletion-request", "delete_data", {"jurisdiction": "other"}, {"deletedFrom": ["stripe"]}, "fail",
         "not_accepted", [f"check: {DELETION} → no (0.3)"]),
        ("content-moderation-appeal", "assess_appeal", {"originalAction": "removed"},
         {"recommendation": "uphold"}, "pass", "complete", []),
        ("content-moderation-appeal", "assess_appeal", {"originalAction": "removed"},
         {"recommendation": "partial"}, "fail", "complete",
         [f"check: {APPEAL_RUBRIC} → level 1: It names the policy but not what in the content meets or misses it. (0.9)"]),
        ("content-moderation-appeal", "assess_appeal", {"originalAction": "account_suspended"},
         {"recommendation": "overturn"}, "unsure", "complete", [f"check: {APPEAL_CHOICE} → unclear (0.8)"]),
    ],
)  # fmt: skip
async def test_the_demo_answers_reach_the_intended_verdicts(
    process: str,
    step: str,
    inputs: dict[str, Any],
    output: dict[str, Any],
    verdict: str,
    effect: str,
    lines: list[str],
) -> None:
    loaded = document.load_path(SAMPLES / process).process
    assert loaded is not None
    material = Material(process, loaded.body, {"inputs": inputs, "steps": {}}, output, "Did it.", ())
    reached = await run_check(
        ScriptedEvaluator.load(ANSWERS), loaded.step(step), material, CheckLimits(), NOW
    )
    assert (reached.verdict, reached.effect, open_lines(reached), reached.model) == (
        verdict,
        effect,
        lines,
        "scripted:check-answers.toml",
    )


REFUND_INPUTS = {
    "orderId": "10482",
    "customerEmail": "ana@example.com",
    "requestedAmount": 80,
    "reason": "damaged",
    "ticketUrl": "https://zendesk.example.com/tickets/77",
}
REFUND_OUTPUT = {
    "orderTotal": 80,
    "approvedAmount": 80,
    "daysSinceDelivery": 3,
    "policyClause": "damaged: refund in full",
    "decisionSummary": "Eligible: refund 80 in full, the item arrived damaged.",
}


async def test_a_refund_called_not_eligible_comes_back_and_passes_once_fixed(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with checked_engine(tmp_path, clock, ScriptedEvaluator.load(ANSWERS)) as engine:  # type: ignore[arg-type]
        assert (await engine.publish(SAMPLES / "customer-refund", {"support-lead": "g_finance"})).ok
        run_id = (await start(engine, "customer-refund", REFUND_INPUTS, who=MIRA))["run"]["id"]
        token = (await claim(engine, run_id, "verify_order"))["token"]
        args: dict[str, Any] = {
            "token": token,
            "evidence": [{"kind": "link", "ref": "https://shop.example.com/orders/10482"}],
            "summary": "Checked the order in Shopify.",
            "next": "issue_refund",
            "reason": "Eligible and 100 or less.",
        }
        wrong = await call(engine, SCREENER, "submit", output={**REFUND_OUTPUT, "eligible": False}, **args)
        err(wrong, "not_accepted", [f"check: {REFUND_YES_NO} → no (0.15)"])
        fixed = ok(
            await call(engine, SCREENER, "submit", output={**REFUND_OUTPUT, "eligible": True}, **args),
            "submit",
        )
    assert step_states(fixed)["verify_order"] == "done"
    assert step_states(fixed)["issue_refund"] == "ready"
    assert fixed["data"]["steps"]["verify_order"]["check"]["verdict"] == "pass"
