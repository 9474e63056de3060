"""Check profile §3 for an agent's submission: pass, fail then fixed, error then retry; and describe."""

from __future__ import annotations

from pathlib import Path

from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator import CheckConfig, CheckLimits, Choice, EvaluatorError, Level, YesNo
from tests.engine.engine_support import (
    FIXTURES,
    MIRA,
    OPS,
    SCREENER,
    Driver,
    call,
    claim,
    err,
    make_org,
    ok,
    step_states,
)
from tests.engine.evaluator.engine_check_support import (
    CHOICE,
    PASS_VERDICT,
    RUBRIC,
    YES_NO,
    Judge,
    checked,
    checked_engine,
    judge,
    publish_vendor_check,
    screening,
    submit,
    vendor_verdict,
    without_urls,
)

__all__ = ["checked", "judge"]

FAILING_LINES = [
    f"check: {YES_NO} → no (0.12)",
    f"check: {CHOICE} → hedges (0.9)",
    f"check: {RUBRIC} → level 1: One list is covered. (0.85)",
]


async def test_describe_offers_check_1_and_its_limits_while_an_evaluator_is_configured(
    checked: Engine,
) -> None:
    data = ok(await call(checked, SCREENER, "describe"), "describe")
    assert data["profiles"] == ["parallel-1", "check-1"]
    assert data["limits"] == {
        "runDataBytes": 1048576,
        "checkPass": 0.9,
        "checkFail": None,
        "checkConfidence": 0.8,
        "checkStateBytes": 65536,
    }
    assert checked.profiles == ("parallel-1", "check-1")


async def test_without_an_evaluator_check_1_is_not_offered_and_vendor_check_is_refused(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with checked_engine(tmp_path, clock, None) as engine:
        data = ok(await call(engine, SCREENER, "describe"), "describe")
        refused = await engine.publish(FIXTURES / "vendor-check", {"finance-approver": "g_finance"})
    assert data["profiles"] == ["parallel-1"]
    assert (refused.ok, refused.issues) == (False, ["profile check-1: not offered by this server"])


async def test_describe_reports_the_configured_limits_even_without_an_evaluator(
    tmp_path: Path, clock: ManualClock
) -> None:
    org = make_org()
    org.check = CheckConfig(limits=CheckLimits(0.95, 0.4, 0.7, 4096))
    async with checked_engine(tmp_path, clock, None, org) as engine:
        data = ok(await call(engine, SCREENER, "describe"), "describe")
    assert data["limits"] == {
        "runDataBytes": 1048576,
        "checkPass": 0.95,
        "checkFail": 0.4,
        "checkConfidence": 0.7,
        "checkStateBytes": 4096,
    }


async def test_a_passing_check_completes_the_step_and_records_the_verdict(
    checked: Engine, judge: Judge
) -> None:
    screen = await screening(checked)
    view = ok(await submit(checked, screen), "submit")
    assert step_states(view)["check_vendor"] == "done"
    assert step_states(view)["approve"] == "waiting"
    recorded = without_urls(view["data"]["steps"]["check_vendor"])
    expected = screen.record()
    expected = {**{k: v for k, v in expected.items() if k not in ("by", "at")}, "check": PASS_VERDICT}
    assert recorded == {**expected, "by": SCREENER.id, "at": "2026-10-06T09:00:00Z", "history": []}
    assert [r.question.ask for r in judge.requests] == [YES_NO, CHOICE, RUBRIC]
    seen = judge.requests[0]
    assert (seen.process, seen.step_id, seen.output, seen.summary, seen.evidence) == (
        "vendor-check",
        "check_vendor",
        screen.submission()["output"],
        screen.submission()["summary"],
        ({"kind": "file", "ref": screen.file["id"]},),
    )
    assert seen.run_data == {"inputs": {"vendorName": "Acme", "amount": 48000}, "steps": {}}
    assert seen.instructions.startswith("Check the vendor against the OFAC and EU sanctions lists.")
    assert seen.body.startswith("\n# Vendor check")


async def test_a_replayed_passing_submit_returns_the_original_view_without_asking_again(
    checked: Engine, judge: Judge
) -> None:
    screen = await screening(checked)
    first = ok(await submit(checked, screen, requestId="req-submit-1"), "submit")
    again = ok(await submit(checked, screen, requestId="req-submit-1"), "submit")
    assert again == first
    assert judge.calls() == 3


async def test_a_failing_check_is_not_accepted_and_the_fixed_submission_passes(
    checked: Engine, judge: Judge, clock: ManualClock
) -> None:
    judge.say(
        yes_no=[YesNo(0.12), YesNo(0.97)],
        choice=[Choice("hedges", 0.9), Choice("states", 0.93)],
        rubric=[Level(1, 0.85), Level(2, 0.88)],
    )
    screen = await screening(checked)
    before = ok(await call(checked, OPS, "get_run", runId=screen.run_id), "get_run")
    refused = err(await submit(checked, screen), "not_accepted", FAILING_LINES)
    assert refused["message"] == "the check did not pass"
    after = ok(await call(checked, OPS, "get_run", runId=screen.run_id), "get_run")
    assert after["data"] == before["data"]
    assert step_states(after)["check_vendor"] == "claimed"

    fixed = ok(
        await submit(checked, screen, summary="Searched OFAC and EU by legal name and aliases."), "submit"
    )
    assert step_states(fixed)["check_vendor"] == "done"
    assert fixed["data"]["steps"]["check_vendor"]["check"] == PASS_VERDICT
    assert judge.calls() == 6


async def test_after_a_fail_the_next_claim_reads_the_verdict_and_its_lines_in_the_handoff(
    checked: Engine, judge: Judge, clock: ManualClock
) -> None:
    judge.say(yes_no=YesNo(0.12), choice=Choice("hedges", 0.9), rubric=Level(1, 0.85))
    screen = await screening(checked)
    err(await submit(checked, screen), "not_accepted", FAILING_LINES)
    clock.advance(seconds=601)
    work = ok(await call(checked, SCREENER, "get_work"), "get_work")
    expected = {
        "issues": FAILING_LINES,
        "check": vendor_verdict("fail", 0.12, ("hedges", 0.9, "fail"), (1, 0.85, "fail"), "fail"),
    }
    assert [item["handoff"] for item in work["items"]] == [expected]
    again = await claim(checked, screen.run_id, "check_vendor")
    assert again["handoff"] == expected


async def test_an_objective_refusal_after_a_fail_drops_the_old_verdict(
    checked: Engine, judge: Judge, clock: ManualClock
) -> None:
    judge.say(yes_no=YesNo(0.12), choice=Choice("hedges", 0.9), rubric=Level(1, 0.85))
    screen = await screening(checked)
    err(await submit(checked, screen), "not_accepted", FAILING_LINES)
    err(await submit(checked, screen, output={"cleared": True}), "not_accepted", ["output.summary: missing"])
    clock.advance(seconds=601)
    again = await claim(checked, screen.run_id, "check_vendor")
    assert again["handoff"] == {"issues": ["output.summary: missing"]}
    assert judge.calls() == 3


async def test_objective_issues_come_first_and_the_evaluator_is_not_asked(
    checked: Engine, judge: Judge
) -> None:
    screen = await screening(checked)
    err(
        await submit(checked, screen, output={"cleared": "yes"}, next="elsewhere"),
        "not_accepted",
        [
            "output.cleared: expected boolean",
            "output.summary: missing",
            "next: 'elsewhere' is not one of approve, decline",
        ],
    )
    assert judge.calls() == 0


async def test_an_evaluator_error_is_retried_once_then_the_agent_gets_retry_and_resubmits(
    checked: Engine, judge: Judge
) -> None:
    down = EvaluatorError("unreachable")
    judge.say(choice=[down, down, Choice("states", 0.93)])
    screen = await screening(checked)
    before = ok(await call(checked, OPS, "get_run", runId=screen.run_id), "get_run")
    failed = err(await submit(checked, screen, requestId="req-resubmit"), "retry")
    assert failed == {
        "code": "retry",
        "message": "the evaluator did not answer; submit again with the same requestId",
    }
    assert ok(await call(checked, OPS, "get_run", runId=screen.run_id), "get_run") == before
    assert [r.question.ask for r in judge.requests].count(CHOICE) == 2

    view = ok(await submit(checked, screen, requestId="req-resubmit"), "submit")
    assert step_states(view)["check_vendor"] == "done"
    assert view["data"]["steps"]["check_vendor"]["check"] == PASS_VERDICT
    replay = ok(await submit(checked, screen, requestId="req-resubmit"), "submit")
    assert replay == view


async def test_one_error_then_an_answer_is_no_error_at_all(checked: Engine, judge: Judge) -> None:
    judge.say(rubric=[EvaluatorError("timeout"), Level(2, 0.88)])
    screen = await screening(checked)
    view = ok(await submit(checked, screen), "submit")
    assert view["data"]["steps"]["check_vendor"]["check"] == PASS_VERDICT
    assert judge.calls() == 4


async def test_vendor_check_is_driven_to_onboarded_and_to_declined(
    tmp_path: Path, clock: ManualClock
) -> None:
    judge = Judge()
    async with checked_engine(tmp_path, clock, judge) as engine:
        await publish_vendor_check(engine)
        outcomes = []
        for plan in ({}, {"check_vendor": ["decline"]}):
            start = ok(
                await call(engine, MIRA, "start_run", process="vendor-check",
                           inputs={"vendorName": "Acme", "amount": 1200}),
                "start_run",
            )  # fmt: skip
            driver = Driver(engine, clock, plan)
            final = await driver.drive(start["run"]["id"])
            outcomes.append((final["run"]["outcome"], driver.trace))
            assert final["data"]["steps"]["check_vendor"]["check"]["verdict"] == "pass"
    assert outcomes == [
        ("onboarded", [("check_vendor", "approve"), ("approve", "approved")]),
        ("declined", [("check_vendor", "decline")]),
    ]
    assert judge.calls() == 6
