"""The scripted evaluator: its file format, its defaults, and a clear error for every bad key."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.document.model import CheckQuestion
from engine.evaluator.base import CheckConfigError, CheckRequest, Choice, EvaluatorError, Level, YesNo
from engine.evaluator.config import CheckLimits
from engine.evaluator.scripted import ScriptedEvaluator, parse_answers
from engine.evaluator.verdict import Verdict, run_check
from tests.engine.evaluator.evaluator_support import (
    CHOICE,
    NOW,
    RUBRIC,
    YES_NO,
    assert_valid_verdict,
    material,
    vendor_step,
)

ANSWERS = f"""
default_yes = 0.95
default_confidence = 0.85

[[answer]]
process = "vendor-check"
step = "check_vendor"
ask = "{YES_NO.ask}"
yes = 0.3

[[answer]]
process = "vendor-check"
step = "check_vendor"
ask = "{CHOICE.ask}"
choice = "hedges"
confidence = 0.92

[[answer]]
process = "vendor-check"
step = "check_vendor"
ask = "{RUBRIC.ask}"
level = 1
"""


def request(
    question: CheckQuestion, process: str = "vendor-check", step: str = "check_vendor"
) -> CheckRequest:
    given = material()
    return CheckRequest(process, step, "Do it.", given.body, given.run_data, None, None, (), question)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "answers.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def test_entries_answer_their_question(tmp_path: Path) -> None:
    evaluator = ScriptedEvaluator.load(write(tmp_path, ANSWERS))
    assert evaluator.model == "scripted:answers.toml"
    assert [await evaluator.answer(request(q)) for q in (YES_NO, CHOICE, RUBRIC)] == [
        YesNo(0.3),
        Choice("hedges", 0.92),
        Level(1, 0.85),
    ]


async def test_entries_are_keyed_by_process_and_step_too(tmp_path: Path) -> None:
    evaluator = ScriptedEvaluator.load(write(tmp_path, ANSWERS))
    assert [
        await evaluator.answer(request(YES_NO, process="other")),
        await evaluator.answer(request(CHOICE, step="other_step")),
        await evaluator.answer(request(RUBRIC, process="other")),
    ] == [YesNo(0.95), Choice("states", 0.85), Level(2, 0.85)]


async def test_an_empty_file_passes_everything_with_full_confidence(tmp_path: Path) -> None:
    evaluator = ScriptedEvaluator.load(write(tmp_path, ""))
    question = CheckQuestion(
        ask="q", kind="choice", choices=(("a", "A"), ("b", "B")), pass_choices=("b", "a")
    )
    assert [await evaluator.answer(request(q)) for q in (YES_NO, question, RUBRIC)] == [
        YesNo(1.0),
        Choice("b", 1.0),
        Level(2, 1.0),
    ]


async def test_a_scripted_run_check_reaches_the_scripted_verdict(tmp_path: Path) -> None:
    evaluator = ScriptedEvaluator.load(write(tmp_path, ANSWERS))
    verdict = await run_check_with(evaluator)
    wire = verdict.wire()
    assert (wire["verdict"], wire["model"]) == ("fail", "scripted:answers.toml")
    assert [q["result"] for q in wire["questions"]] == ["fail", "fail", "fail"]
    assert_valid_verdict(wire)


async def run_check_with(evaluator: ScriptedEvaluator) -> Verdict:
    return await run_check(evaluator, vendor_step(), material(), CheckLimits(), NOW)


async def test_an_entry_of_the_wrong_kind_is_an_evaluator_error(tmp_path: Path) -> None:
    text = f'[[answer]]\nprocess = "vendor-check"\nstep = "check_vendor"\nask = "{CHOICE.ask}"\nlevel = 2\n'
    evaluator = ScriptedEvaluator.load(write(tmp_path, text))
    with pytest.raises(EvaluatorError) as raised:
        await evaluator.answer(request(CHOICE))
    assert str(raised.value) == (
        "scripted:answers.toml: the entry for 'What does the summary do?' gives `level` but the question is choice"
    )


async def test_a_choice_the_question_does_not_offer_makes_an_error_verdict(tmp_path: Path) -> None:
    text = f'[[answer]]\nprocess = "vendor-check"\nstep = "check_vendor"\nask = "{CHOICE.ask}"\nchoice = "maybe"\n'
    verdict = await run_check_with(ScriptedEvaluator.load(write(tmp_path, text)))
    assert verdict.verdict == "error"
    assert verdict.wire()["questions"][1] == {
        "ask": CHOICE.ask,
        "kind": "choice",
        "answer": None,
        "result": "unsure",
    }


ENTRY = 'process = "p"\nstep = "s"\nask = "q"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("default_yes = 0.9\nverbose = true\n", "answers.toml: verbose: unknown key"),
        ("default_yes = 2\n", "answers.toml: default_yes: must be a number from 0 to 1, got 2"),
        ("default_yes = true\n", "answers.toml: default_yes: must be a number from 0 to 1, got True"),
        (
            'default_confidence = "high"\n',
            "answers.toml: default_confidence: must be a number from 0 to 1, got 'high'",
        ),
        ("answer = 1\n", "answers.toml: answer: must be an array of tables, written [[answer]]"),
        ("answer = [1]\n", "answers.toml: answer[0]: must be a table"),
        (f"[[answer]]\n{ENTRY}yes = 0.1\nnote = 'x'\n", "answers.toml: answer[0].note: unknown key"),
        (
            "[[answer]]\nstep = 's'\nask = 'q'\nyes = 0.1\n",
            "answers.toml: answer[0].process: required, a non-empty string",
        ),
        (
            "[[answer]]\nprocess = 'p'\nstep = 's'\nask = ''\nyes = 0.1\n",
            "answers.toml: answer[0].ask: required, a non-empty string",
        ),
        (f"[[answer]]\n{ENTRY}", "answers.toml: answer[0]: needs exactly one of yes, choice, level; found 0"),
        (
            f"[[answer]]\n{ENTRY}yes = 0.1\nlevel = 1\n",
            "answers.toml: answer[0]: needs exactly one of yes, choice, level; found 2",
        ),
        (
            f"[[answer]]\n{ENTRY}yes = 1.5\n",
            "answers.toml: answer[0].yes: must be a number from 0 to 1, got 1.5",
        ),
        (
            f"[[answer]]\n{ENTRY}yes = 0.5\nconfidence = 0.9\n",
            "answers.toml: answer[0].confidence: a yes answer carries no confidence",
        ),
        (
            f"[[answer]]\n{ENTRY}choice = 3\n",
            "answers.toml: answer[0].choice: must be a non-empty string, got 3",
        ),
        (
            f"[[answer]]\n{ENTRY}level = -1\n",
            "answers.toml: answer[0].level: must be a whole number from 0, got -1",
        ),
        (
            f"[[answer]]\n{ENTRY}level = 1.5\n",
            "answers.toml: answer[0].level: must be a whole number from 0, got 1.5",
        ),
        (
            f"[[answer]]\n{ENTRY}level = 1\nconfidence = -0.1\n",
            "answers.toml: answer[0].confidence: must be a number from 0 to 1, got -0.1",
        ),
        (
            f"[[answer]]\n{ENTRY}yes = 0.1\n[[answer]]\n{ENTRY}yes = 0.2\n",
            "answers.toml: answer[1]: a second answer for 'q' in p.s",
        ),
    ],
)
def test_a_bad_file_names_the_key(text: str, message: str) -> None:
    with pytest.raises(CheckConfigError) as raised:
        parse_answers(text, "answers.toml")
    assert str(raised.value) == message


def test_a_file_that_is_not_toml_says_so() -> None:
    with pytest.raises(CheckConfigError) as raised:
        parse_answers("yes = = 1\n", "answers.toml")
    assert str(raised.value).startswith("answers.toml: not valid TOML: ")


def test_a_missing_file_says_which(tmp_path: Path) -> None:
    with pytest.raises(CheckConfigError) as raised:
        ScriptedEvaluator.load(tmp_path / "nope.toml")
    assert (
        str(raised.value) == f"check.answers: cannot read {tmp_path / 'nope.toml'}: No such file or directory"
    )
