"""`run_check`: every verdict path of check profile §3, each verdict checked against the schema."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.evaluator.base import Answer, CheckRequest, Choice, Level, YesNo
from engine.evaluator.config import CheckLimits
from engine.evaluator.verdict import issue_lines, run_check
from tests.engine.evaluator.evaluator_support import (
    CHOICE,
    INSTRUCTIONS,
    NOW,
    RUBRIC,
    YES_NO,
    FakeEvaluator,
    assert_valid_verdict,
    errors,
    material,
    vendor_step,
)

LIMITS = CheckLimits()
PASSING: dict[str, Answer] = {
    YES_NO.ask: YesNo(0.97),
    CHOICE.ask: Choice("states", 0.91),
    RUBRIC.ask: Level(2, 0.88),
}


def wire_questions(*rows: tuple[Any, ...]) -> list[dict[str, Any]]:
    out = []
    for ask, kind, answer, confidence, result in rows:
        row = {"ask": ask, "kind": kind, "answer": answer}
        if confidence is not None:
            row["confidence"] = confidence
        row["result"] = result
        out.append(row)
    return out


async def test_pass() -> None:
    evaluator = FakeEvaluator(dict(PASSING))
    verdict = await run_check(evaluator, vendor_step(), material(), LIMITS, NOW)
    wire = verdict.wire()
    assert wire == {
        "verdict": "pass",
        "advisory": False,
        "model": "fake-evaluator-1",
        "questions": wire_questions(
            (YES_NO.ask, "yes_no", 0.97, None, "pass"),
            (CHOICE.ask, "choice", "states", 0.91, "pass"),
            (RUBRIC.ask, "rubric", 2, 0.88, "pass"),
        ),
        "at": "2026-10-06T09:04:20Z",
    }
    assert (verdict.effect, issue_lines(verdict)) == ("complete", [])
    assert_valid_verdict(wire)


async def test_the_evaluator_sees_the_material_and_one_question_each_time() -> None:
    evaluator = FakeEvaluator(dict(PASSING))
    given = material()
    await run_check(evaluator, vendor_step(), given, LIMITS, NOW)
    assert [r.question for r in evaluator.requests] == [YES_NO, CHOICE, RUBRIC]
    first = evaluator.requests[0]
    assert first == CheckRequest(
        process="vendor-check",
        step_id="check_vendor",
        instructions=INSTRUCTIONS,
        body=given.body,
        run_data=given.run_data,
        output={"cleared": True, "summary": "No matches on OFAC or EU lists."},
        summary="Searched both lists by legal name. No hits. Report attached.",
        evidence=({"kind": "file", "ref": "f_91a"},),
        question=YES_NO,
    )


async def test_fail_lists_each_failed_question() -> None:
    answers: dict[str, Answer] = {
        YES_NO.ask: YesNo(0.12),
        CHOICE.ask: Choice("hedges", 0.9),
        RUBRIC.ask: Level(2, 0.9),
    }
    verdict = await run_check(FakeEvaluator(answers), vendor_step(), material(), LIMITS, NOW)
    wire = verdict.wire()
    assert (wire["verdict"], verdict.effect) == ("fail", "not_accepted")
    assert wire["questions"] == wire_questions(
        (YES_NO.ask, "yes_no", 0.12, None, "fail"),
        (CHOICE.ask, "choice", "hedges", 0.9, "fail"),
        (RUBRIC.ask, "rubric", 2, 0.9, "pass"),
    )
    assert issue_lines(verdict) == [
        "check: The cleared verdict matches what the attached report says. → no (0.12)",
        "check: What does the summary do? → hedges (0.9)",
    ]
    assert_valid_verdict(wire)


async def test_unsure_outranks_fail() -> None:
    answers: dict[str, Answer] = {
        YES_NO.ask: YesNo(0.62),
        CHOICE.ask: Choice("hedges", 0.95),
        RUBRIC.ask: Level(2, 0.9),
    }
    verdict = await run_check(FakeEvaluator(answers), vendor_step(), material(), LIMITS, NOW)
    wire = verdict.wire()
    assert (wire["verdict"], verdict.effect) == ("unsure", "escalate")
    assert [q["result"] for q in wire["questions"]] == ["unsure", "fail", "pass"]
    assert issue_lines(verdict) == ["check: What does the summary do? → hedges (0.95)"]
    assert_valid_verdict(wire)


async def test_low_confidence_alone_makes_it_unsure() -> None:
    answers = dict(PASSING) | {RUBRIC.ask: Level(2, 0.79)}
    verdict = await run_check(FakeEvaluator(answers), vendor_step(), material(), LIMITS, NOW)
    assert [q["result"] for q in verdict.wire()["questions"]] == ["pass", "pass", "unsure"]
    assert verdict.verdict == "unsure"


async def test_one_error_is_retried_and_then_answered() -> None:
    evaluator = FakeEvaluator(dict(PASSING), failures={CHOICE.ask: 1})
    verdict = await run_check(evaluator, vendor_step(), material(), LIMITS, NOW)
    assert verdict.verdict == "pass"
    assert [evaluator.calls(q.ask) for q in (YES_NO, CHOICE, RUBRIC)] == [1, 2, 1]


async def test_two_errors_make_an_error_verdict_after_exactly_one_retry() -> None:
    evaluator = FakeEvaluator(dict(PASSING) | {YES_NO.ask: YesNo(0.1)}, failures={CHOICE.ask: 2})
    verdict = await run_check(evaluator, vendor_step(), material(), LIMITS, NOW)
    wire = verdict.wire()
    assert wire == {
        "verdict": "error",
        "advisory": False,
        "model": "fake-evaluator-1",
        "questions": wire_questions(
            (YES_NO.ask, "yes_no", 0.1, None, "fail"),
            (CHOICE.ask, "choice", None, None, "unsure"),
            (RUBRIC.ask, "rubric", 2, 0.88, "pass"),
        ),
        "at": "2026-10-06T09:04:20Z",
    }
    assert verdict.effect == "retry"
    assert [evaluator.calls(q.ask) for q in (YES_NO, CHOICE, RUBRIC)] == [1, 2, 1]
    assert_valid_verdict(wire)


async def test_an_answer_that_does_not_fit_counts_as_an_error_and_is_retried() -> None:
    evaluator = FakeEvaluator(dict(PASSING) | {CHOICE.ask: Choice("maybe", 0.99)})
    verdict = await run_check(evaluator, vendor_step(), material(), LIMITS, NOW)
    assert (verdict.verdict, evaluator.calls(CHOICE.ask)) == ("error", 2)
    assert verdict.wire()["questions"][1] == {
        "ask": CHOICE.ask,
        "kind": "choice",
        "answer": None,
        "result": "unsure",
    }


@pytest.mark.parametrize(
    ("answers", "failures", "verdict"),
    [
        ({YES_NO.ask: YesNo(0.12)}, {}, "fail"),
        ({YES_NO.ask: YesNo(0.6)}, {}, "unsure"),
        ({YES_NO.ask: YesNo(0.99)}, {YES_NO.ask: 2}, "error"),
        ({YES_NO.ask: YesNo(0.99)}, {}, "pass"),
    ],
)
async def test_an_advisory_verdict_is_recorded_and_never_blocks(
    answers: dict[str, Answer], failures: dict[str, int], verdict: str
) -> None:
    evaluator = FakeEvaluator(answers, failures=dict(failures))
    result = await run_check(evaluator, vendor_step(YES_NO, advisory=True), material(), LIMITS, NOW)
    wire = result.wire()
    assert (wire["verdict"], wire["advisory"], result.effect) == (verdict, True, "complete")
    assert_valid_verdict(wire)


async def test_truncation_is_recorded_and_the_evaluator_sees_the_cut_data() -> None:
    run_data: dict[str, Any] = {
        "inputs": {"vendorName": "Acme"},
        "steps": {
            "intake": {"summary": "x" * 400, "by": "a_intake", "at": "2026-10-06T09:00:00Z", "history": []},
            "prior": {"summary": "y" * 40, "by": "a_intake", "at": "2026-10-06T09:01:00Z", "history": []},
        },
    }
    evaluator = FakeEvaluator({YES_NO.ask: YesNo(0.95)})
    verdict = await run_check(
        evaluator, vendor_step(YES_NO), material(run_data), CheckLimits(state_bytes=200), NOW
    )
    wire = verdict.wire()
    assert wire["truncated"] is True
    assert list(wire) == ["verdict", "advisory", "model", "questions", "truncated", "at"]
    assert evaluator.requests[0].run_data == {
        "inputs": {"vendorName": "Acme"},
        "steps": {"prior": run_data["steps"]["prior"]},
    }
    assert_valid_verdict(wire)


async def test_questions_are_asked_at_once() -> None:
    arrived = asyncio.Event()
    waiting: list[str] = []

    class Together(FakeEvaluator):
        async def answer(self, request: CheckRequest) -> Answer:
            waiting.append(request.question.ask)
            if len(waiting) == 3:
                arrived.set()
            await arrived.wait()
            return await super().answer(request)

    async with asyncio.timeout(5):
        verdict = await run_check(Together(dict(PASSING)), vendor_step(), material(), LIMITS, NOW)
    assert verdict.verdict == "pass"


async def test_a_step_without_check_is_refused() -> None:
    step = vendor_step()
    bare = type(step)(id=step.id, kind=step.kind, value=step.value)
    with pytest.raises(ValueError) as raised:
        await run_check(FakeEvaluator({}), bare, material(), LIMITS, NOW)
    assert str(raised.value) == "step 'check_vendor' has no check"


@pytest.mark.parametrize(
    "place",
    [
        "run-data.json#/properties/steps/additionalProperties/properties/check",
        "work-item.json#/properties/escalation/anyOf/0/properties/check",
        "work-item.json#/properties/handoff/anyOf/0/properties/check",
    ],
)
async def test_the_verdict_fits_every_place_the_schemas_put_it(place: str) -> None:
    evaluator = FakeEvaluator(dict(PASSING) | {YES_NO.ask: YesNo(0.6)}, failures={RUBRIC.ask: 2})
    wire = (await run_check(evaluator, vendor_step(), material(), LIMITS, NOW)).wire()
    assert errors(place, wire) == []
    assert errors(place, {**wire, "verdict": "maybe"}) == [
        "['verdict']: 'maybe' is not one of ['pass', 'fail', 'unsure', 'error']"
    ]
