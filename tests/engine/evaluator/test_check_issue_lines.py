"""The `check: <ask> → <answer>` lines of a refusal (check profile §3), and how their numbers read.

Numbers get two decimals, or as many more (up to six) as keep them on their side of the threshold
that decided, and lose trailing zeros: a refusal never shows a number that would have passed.
"""

from __future__ import annotations

import pytest

from engine.document.model import CheckQuestion
from engine.evaluator.base import Choice, Level, YesNo
from engine.evaluator.config import CheckLimits
from engine.evaluator.verdict import QuestionResult, Verdict, answer_text, issue_lines, judge
from tests.engine.evaluator.evaluator_support import CHOICE, NOW, RUBRIC, YES_NO

LIMITS = CheckLimits()


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0.12, "no (0.12)"),
        (0.123456, "no (0.12)"),
        (0.0, "no (0)"),
        (0.5, "no (0.5)"),
        (0.899, "no (0.899)"),
        (0.8999999, "no (0.899999)"),
        (0.895, "no (0.895)"),
        (0.9, "yes (0.9)"),
        (0.904, "yes (0.9)"),
        (0.95, "yes (0.95)"),
        (0.996, "yes (1)"),
        (1.0, "yes (1)"),
    ],
)
def test_yes_no_answer_text_against_pass_0_9(p: float, text: str) -> None:
    assert answer_text(judge(YES_NO, YesNo(p), LIMITS)) == text


def test_yes_no_answer_text_keeps_a_yes_above_an_odd_threshold() -> None:
    question = CheckQuestion(ask="q", kind="yes_no", pass_at=0.903)
    assert [answer_text(judge(question, YesNo(p), LIMITS)) for p in (0.9031, 0.903, 0.9029, 0.91)] == [
        "yes (0.903)",
        "yes (0.903)",
        "no (0.9)",
        "yes (0.91)",
    ]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (Choice("hedges", 0.9), "hedges (0.9)"),
        (Choice("hedges", 0.876), "hedges (0.88)"),
        (Choice("hedges", 1.0), "hedges (1)"),
        (Choice("hedges", 0.8), "hedges (0.8)"),
        (Choice("hedges", 0.80001), "hedges (0.8)"),
    ],
)
def test_choice_answer_text(answer: Choice, text: str) -> None:
    assert answer_text(judge(CHOICE, answer, LIMITS)) == text


def test_a_confidence_just_below_its_threshold_is_not_rounded_up_to_it() -> None:
    assert answer_text(judge(CHOICE, Choice("states", 0.7996), LIMITS)) == "states (0.7996)"


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (Level(1, 0.85), "level 1: One list is covered. (0.85)"),
        (Level(0, 0.9), "level 0: Neither list is clearly covered. (0.9)"),
        (Level(2, 1.0), "level 2: Both lists are covered with the search terms stated. (1)"),
    ],
)
def test_rubric_answer_text(answer: Level, text: str) -> None:
    assert answer_text(judge(RUBRIC, answer, LIMITS)) == text


def test_an_unanswered_question_reads_no_answer() -> None:
    assert answer_text(QuestionResult(YES_NO, None, "unsure")) == "no answer"


def test_issue_lines_list_only_the_failed_questions_in_question_order() -> None:
    results = (
        judge(YES_NO, YesNo(0.12), LIMITS),
        judge(CHOICE, Choice("states", 0.97), LIMITS),
        judge(RUBRIC, Level(1, 0.85), LIMITS),
    )
    verdict = Verdict("fail", False, "fake-evaluator-1", results, NOW)
    assert issue_lines(verdict) == [
        "check: The cleared verdict matches what the attached report says. → no (0.12)",
        "check: How complete is the screening? → level 1: One list is covered. (0.85)",
    ]


def test_issue_lines_of_a_choice_failure() -> None:
    verdict = Verdict("fail", False, "m", (judge(CHOICE, Choice("hedges", 0.9), LIMITS),), NOW)
    assert issue_lines(verdict) == ["check: What does the summary do? → hedges (0.9)"]


def test_no_issue_lines_when_nothing_failed() -> None:
    results = (judge(YES_NO, YesNo(0.6), LIMITS), judge(CHOICE, Choice("unclear", 0.9), LIMITS))
    assert [r.result for r in results] == ["unsure", "unsure"]
    assert issue_lines(Verdict("unsure", False, "m", results, NOW)) == []
