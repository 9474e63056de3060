"""Thresholds of each question kind (check profile §2, §3), at and around every boundary."""

from __future__ import annotations

import math

import pytest

from engine.document.model import CheckQuestion
from engine.evaluator.base import Choice, EvaluatorError, Level, YesNo
from engine.evaluator.config import CheckLimits
from engine.evaluator.verdict import judge
from tests.engine.evaluator.evaluator_support import CHOICE, RUBRIC, YES_NO

LIMITS = CheckLimits()
BARE_YES_NO = CheckQuestion(ask="The report covers both lists.", kind="yes_no")


@pytest.mark.parametrize(
    ("p", "result"),
    [(1.0, "pass"), (0.9, "pass"), (0.8999, "unsure"), (0.5, "unsure"), (0.4999, "fail"), (0.0, "fail")],
)
def test_yes_no_with_pass_and_fail(p: float, result: str) -> None:
    judged = judge(YES_NO, YesNo(p), LIMITS)
    assert (judged.result, judged.pass_at, judged.confidence_at) == (result, 0.9, None)


@pytest.mark.parametrize(("p", "result"), [(0.9, "pass"), (0.8999, "fail"), (0.1, "fail")])
def test_yes_no_without_fail_fails_below_pass(p: float, result: str) -> None:
    question = CheckQuestion(ask="q", kind="yes_no", pass_at=0.9)
    assert judge(question, YesNo(p), CheckLimits(fail_below=None)).result == result


@pytest.mark.parametrize(
    ("p", "result"), [(0.75, "pass"), (0.7499, "unsure"), (0.6, "unsure"), (0.5999, "fail")]
)
def test_yes_no_takes_the_server_limits_when_the_question_sets_none(p: float, result: str) -> None:
    judged = judge(BARE_YES_NO, YesNo(p), CheckLimits(pass_at=0.75, fail_below=0.6))
    assert (judged.result, judged.pass_at) == (result, 0.75)


def test_yes_no_default_limits_have_no_unsure_band() -> None:
    assert [judge(BARE_YES_NO, YesNo(p), LIMITS).result for p in (0.9, 0.89, 0.0)] == ["pass", "fail", "fail"]


def test_question_fail_overrides_server_fail() -> None:
    question = CheckQuestion(ask="q", kind="yes_no", fail_below=0.2)
    limits = CheckLimits(pass_at=0.9, fail_below=0.6)
    assert [judge(question, YesNo(p), limits).result for p in (0.5, 0.2, 0.1999)] == [
        "unsure",
        "unsure",
        "fail",
    ]


def test_server_fail_above_the_question_pass_is_capped_there() -> None:
    question = CheckQuestion(ask="q", kind="yes_no", pass_at=0.5)
    limits = CheckLimits(pass_at=0.9, fail_below=0.7)
    assert [judge(question, YesNo(p), limits).result for p in (0.6, 0.5, 0.4999)] == ["pass", "pass", "fail"]


@pytest.mark.parametrize(
    ("name", "confidence", "result"),
    [
        ("states", 0.91, "pass"),
        ("states", 0.8, "pass"),
        ("states", 0.7999, "unsure"),
        ("unclear", 0.99, "unsure"),
        ("hedges", 0.9, "fail"),
        ("hedges", 0.8, "fail"),
        ("hedges", 0.7999, "unsure"),
    ],
)
def test_choice(name: str, confidence: float, result: str) -> None:
    judged = judge(CHOICE, Choice(name, confidence), LIMITS)
    assert (judged.result, judged.pass_at, judged.confidence_at) == (result, None, 0.8)


def test_choice_without_an_unsure_list_fails_every_other_answer() -> None:
    question = CheckQuestion(
        ask="q", kind="choice", choices=(("a", "A"), ("b", "B"), ("c", "C")), pass_choices=("a", "b")
    )
    assert [judge(question, Choice(n, 1.0), LIMITS).result for n in ("a", "b", "c")] == [
        "pass",
        "pass",
        "fail",
    ]


def test_choice_confidence_from_the_question_overrides_the_server() -> None:
    question = CheckQuestion(
        ask="q", kind="choice", choices=(("a", "A"), ("b", "B")), pass_choices=("a",), confidence=0.5
    )
    limits = CheckLimits(confidence=0.95)
    assert [judge(question, Choice("a", c), limits).result for c in (0.5, 0.4999)] == ["pass", "unsure"]


@pytest.mark.parametrize(
    ("level", "confidence", "result"),
    [
        (2, 0.8, "pass"),
        (2, 1.0, "pass"),
        (1, 0.99, "fail"),
        (0, 0.8, "fail"),
        (2, 0.7999, "unsure"),
        (0, 0.1, "unsure"),
    ],
)
def test_rubric(level: int, confidence: float, result: str) -> None:
    judged = judge(RUBRIC, Level(level, confidence), CheckLimits(confidence=0.99))
    assert (judged.result, judged.confidence_at) == (result, 0.8)


def test_rubric_without_its_own_confidence_takes_the_server_default() -> None:
    question = CheckQuestion(ask="q", kind="rubric", levels=("bad", "ok", "good"), pass_level=1)
    assert [judge(question, Level(1, c), LIMITS).result for c in (0.8, 0.79)] == ["pass", "unsure"]


@pytest.mark.parametrize(
    ("question", "answer", "message"),
    [
        (YES_NO, Choice("states", 1.0), "a yes/no question got a Choice answer"),
        (CHOICE, YesNo(0.5), "a choice question got a YesNo answer"),
        (RUBRIC, Choice("states", 1.0), "a rubric question got a Choice answer"),
        (YES_NO, YesNo(1.5), "yes-probability 1.5 is not a number from 0 to 1"),
        (YES_NO, YesNo(-0.1), "yes-probability -0.1 is not a number from 0 to 1"),
        (YES_NO, YesNo(math.nan), "yes-probability nan is not a number from 0 to 1"),
        (YES_NO, YesNo(True), "yes-probability True is not a number from 0 to 1"),
        (CHOICE, Choice("maybe", 0.9), "choice 'maybe' is not one of states, hedges, unclear"),
        (CHOICE, Choice("states", 1.2), "confidence 1.2 is not a number from 0 to 1"),
        (RUBRIC, Level(3, 0.9), "level 3 is not from 0 to 2"),
        (RUBRIC, Level(-1, 0.9), "level -1 is not from 0 to 2"),
        (RUBRIC, Level(True, 0.9), "level True is not from 0 to 2"),
        (RUBRIC, Level(1, math.nan), "confidence nan is not a number from 0 to 1"),
    ],
)
def test_an_answer_that_does_not_fit_its_question_is_an_evaluator_error(
    question: CheckQuestion, answer: YesNo | Choice | Level, message: str
) -> None:
    with pytest.raises(EvaluatorError) as raised:
        judge(question, answer, LIMITS)
    assert str(raised.value) == message
