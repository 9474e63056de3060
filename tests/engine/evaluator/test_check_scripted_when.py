"""Scripted answers with `when`: an entry that answers only submissions with given inputs or output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.evaluator.base import CheckConfigError, CheckRequest, YesNo
from engine.evaluator.scripted import ScriptedEvaluator, parse_answers
from tests.engine.evaluator.evaluator_support import YES_NO, material

ENTRY = f'process = "vendor-check"\nstep = "check_vendor"\nask = "{YES_NO.ask}"\n'
ANSWERS = f"""
default_yes = 0.95

[[answer]]
{ENTRY}yes = 0.5

[[answer]]
{ENTRY}yes = 0.2
when = {{ inputs = {{ vendorName = "Globex" }}, output = {{ cleared = true }} }}

[[answer]]
{ENTRY}yes = 0.3
when = {{ output = {{ cleared = true }} }}

[[answer]]
{ENTRY}yes = 0.4
when.inputs.amount = 1
"""


def request(inputs: dict[str, Any], output: dict[str, Any] | None) -> CheckRequest:
    given = material({"inputs": inputs, "steps": {}})
    return CheckRequest(
        "vendor-check", "check_vendor", "Do it.", given.body, given.run_data, output, None, (), YES_NO
    )


@pytest.mark.parametrize(
    ("inputs", "output", "p"),
    [
        ({"vendorName": "Globex"}, {"cleared": True}, 0.2),
        ({"vendorName": "Acme"}, {"cleared": True}, 0.3),
        ({"vendorName": "Globex"}, {"cleared": False}, 0.5),
        ({"vendorName": "Globex"}, None, 0.5),
        ({"amount": 1}, {"cleared": False}, 0.4),
        ({"amount": True}, {"cleared": 1}, 0.5),
        ({}, {}, 0.5),
    ],
)
async def test_the_first_matching_when_answers_and_the_plain_entry_takes_the_rest(
    tmp_path: Path, inputs: dict[str, Any], output: dict[str, Any] | None, p: float
) -> None:
    path = tmp_path / "answers.toml"
    path.write_text(ANSWERS, encoding="utf-8")
    evaluator = ScriptedEvaluator.load(path)
    assert await evaluator.answer(request(inputs, output)) == YesNo(p)


async def test_without_a_plain_entry_an_unmatched_submission_gets_the_default(tmp_path: Path) -> None:
    path = tmp_path / "answers.toml"
    path.write_text(f"[[answer]]\n{ENTRY}yes = 0.2\nwhen = {{ output = {{ cleared = false }} }}\n")
    evaluator = ScriptedEvaluator.load(path)
    assert await evaluator.answer(request({}, {"cleared": True})) == YesNo(1.0)
    assert await evaluator.answer(request({}, {"cleared": False})) == YesNo(0.2)


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ("when = 3", "answers.toml: answer[0].when: must be a table naming inputs or output fields"),
        ("when = {}", "answers.toml: answer[0].when: must be a table naming inputs or output fields"),
        ("when = { summary = 'x' }", "answers.toml: answer[0].when.summary: unknown key (allowed: inputs, output)"),
        ("when = { output = 1 }", "answers.toml: answer[0].when.output: must be a table of field = value"),
        ("when = { inputs = {} }", "answers.toml: answer[0].when.inputs: must be a table of field = value"),
    ],
)  # fmt: skip
def test_a_bad_when_names_the_key(when: str, message: str) -> None:
    with pytest.raises(CheckConfigError) as raised:
        parse_answers(f"[[answer]]\n{ENTRY}yes = 0.1\n{when}\n", "answers.toml")
    assert str(raised.value) == message


def test_two_entries_with_the_same_when_are_refused() -> None:
    when = "when = { output = { cleared = true } }"
    text = f"[[answer]]\n{ENTRY}yes = 0.1\n{when}\n[[answer]]\n{ENTRY}yes = 0.2\n{when}\n"
    with pytest.raises(CheckConfigError) as raised:
        parse_answers(text, "answers.toml")
    assert str(raised.value) == (
        f"answers.toml: answer[1]: a second answer for {YES_NO.ask!r} in vendor-check.check_vendor with the same when"
    )
