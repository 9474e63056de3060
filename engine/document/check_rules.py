"""The check profile's `check:` key (check profile §2): questions an evaluator answers about a submission.

A question that would be ambiguous for the evaluator or the verdict (two kinds at once, a pass level
outside the rubric) is refused at publication, never at run time. The profile refuses a check only on a
server without it, so what it defines a verdict for stays publishable even when its author surely meant
otherwise (no unsure band, nothing that passes, an answer both passing and unsure, a key the kind does
not read): a warning says so, and what the verdict will be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.document.model import CheckQuestion
from engine.document.wording import Report, is_number, is_text, join, show

QUESTION_KEYS = ("ask", "pass", "fail", "one_of", "unsure", "levels", "confidence")
RUBRIC_LEVELS = (2, 10)

_KIND_WORDS = {"yes_no": "a yes/no question", "choice": "a choice question", "rubric": "a rubric question"}
_KEY_KINDS = {"fail": ("yes_no",), "unsure": ("choice",)}
_KEY_OWNERS = {"fail": "only a yes/no question has fail", "unsure": "only a choice question has unsure"}


def check_questions(value: Any, path: str, report: Report) -> tuple[CheckQuestion, ...] | None:
    """The questions of a `check` value, or None when it has issues (each one added to `report`)."""
    if isinstance(value, str):
        if not value.strip():
            report.add(path, "the short form must be a question, not blank text")
            return None
        return (CheckQuestion(ask=value, kind="yes_no"),)
    if not isinstance(value, list):
        report.add(path, f"must be a yes/no question or a list of questions, not {show(value)}")
        return None
    if not value:
        report.add(path, "needs at least one question")
        return None
    before = len(report.issues)
    questions = [_question(item, f"{path}[{i}]", report) for i, item in enumerate(value)]
    if len(report.issues) > before:
        return None
    return tuple(q for q in questions if q is not None)


def _question(item: Any, path: str, report: Report) -> CheckQuestion | None:
    if not isinstance(item, Mapping):
        report.add(path, f"a question must be a mapping with ask, not {show(item)}")
        return None
    for key in item:
        if key not in QUESTION_KEYS:
            report.add(join(path, key), f"unknown key {show(key)} in a question")
    ask = item.get("ask")
    if "ask" not in item:
        report.add(join(path, "ask"), "required: the question in plain language")
    elif not is_text(ask):
        report.add(join(path, "ask"), f"must be a non-empty question, not {show(ask)}")
    if "one_of" in item and "levels" in item:
        report.add(path, "has both one_of and levels; a question is a choice, a rubric, or neither (yes/no)")
        return None
    kind = "choice" if "one_of" in item else "rubric" if "levels" in item else "yes_no"
    for key, kinds in _KEY_KINDS.items():
        if key in item and kind not in kinds:
            report.add(join(path, key), f"{_KEY_OWNERS[key]}; this is {_KIND_WORDS[kind]}")
    confidence = _probability(item, "confidence", path, report)
    if kind == "yes_no":
        return _yes_no(item, ask, confidence, path, report)
    if kind == "choice":
        return _choice(item, ask, confidence, path, report)
    return _rubric(item, ask, confidence, path, report)


def _probability(item: Mapping[str, Any], key: str, path: str, report: Report) -> float | None:
    if key not in item:
        return None
    value = item[key]
    if not is_number(value) or not 0 <= value <= 1:
        report.add(join(path, key), f"must be a number from 0 to 1, not {show(value)}")
        return None
    return float(value)


def _yes_no(
    item: Mapping[str, Any], ask: Any, confidence: float | None, path: str, report: Report
) -> CheckQuestion:
    pass_at = _probability(item, "pass", path, report)
    fail_below = _probability(item, "fail", path, report)
    if pass_at is not None and fail_below is not None and not fail_below < pass_at:
        written, limit = item["fail"], item["pass"]
        swapped = f"pass: {written} and fail: {limit}"
        meant = "to leave fail out" if fail_below == pass_at else swapped
        report.warn(
            join(path, "fail"),
            f"fail {written} is not below pass {limit}, so no answer is unsure: below {limit} fails, "
            f"at or above it passes; did you mean {meant}?",
        )
    if confidence is not None:
        report.warn(
            join(path, "confidence"),
            "a yes/no answer is a probability, judged by pass and fail alone, so confidence is ignored; "
            f"did you mean pass: {item['confidence']} (the yes-probability at or above which it passes)?",
        )
    return CheckQuestion(ask=ask, kind="yes_no", pass_at=pass_at, fail_below=fail_below)


def _choice(
    item: Mapping[str, Any], ask: Any, confidence: float | None, path: str, report: Report
) -> CheckQuestion:
    answers = item["one_of"]
    answers_path = join(path, "one_of")
    choices: list[tuple[str, str]] = []
    if not isinstance(answers, Mapping):
        report.add(answers_path, f"must map each answer name to a description, not {show(answers)}")
    else:
        if len(answers) < 2:
            report.add(answers_path, f"needs two or more answers, found {len(answers)}")
        for name, description in answers.items():
            if not is_text(name):
                report.add(answers_path, f"answer name {show(name)} must be non-empty text")
            elif not isinstance(description, str):
                report.add(join(answers_path, name), f"must be a description, not {show(description)}")
            else:
                choices.append((name, description))
    names = {name for name, _ in choices} if isinstance(answers, Mapping) else None
    passing = _names(item, "pass", names, path, report, required=True)
    unsure = _names(item, "unsure", names, path, report, required=False)
    if "pass" in item and item["pass"] == []:
        report.warn(
            join(path, "pass"),
            "no answer passes, so this question never lets a submission through: each answer fails, or "
            "is unsure when listed in unsure; did you mean to list the answers that pass?",
        )
    for i, name in enumerate(unsure):
        if name in passing:
            report.warn(
                f"{join(path, 'unsure')}[{i}]",
                f"{show(name)} is also in pass; it counts as unsure, the worse of the two (as unsure "
                "outranks pass in a verdict, check profile §3); did you mean it in only one of them?",
            )
    return CheckQuestion(
        ask=ask,
        kind="choice",
        choices=tuple(choices),
        pass_choices=passing,
        unsure_choices=unsure,
        confidence=confidence,
    )


def _names(
    item: Mapping[str, Any], key: str, known: set[str] | None, path: str, report: Report, *, required: bool
) -> tuple[str, ...]:
    """Answer names from one_of; with one_of itself unreadable (`known` None), only their form is checked."""
    key_path = join(path, key)
    if key not in item:
        if required:
            report.add(key_path, "required: the list of answer names that pass")
        return ()
    value = item[key]
    if not isinstance(value, list):
        report.add(key_path, f"must be a list of answer names from one_of, not {show(value)}")
        return ()
    seen: list[str] = []
    for i, name in enumerate(value):
        if not isinstance(name, str) or (known is not None and name not in known):
            report.add(f"{key_path}[{i}]", f"{show(name)} is not an answer in one_of")
        elif name in seen:
            report.add(f"{key_path}[{i}]", f"{show(name)} is listed twice")
        else:
            seen.append(name)
    return tuple(seen)


def _rubric(
    item: Mapping[str, Any], ask: Any, confidence: float | None, path: str, report: Report
) -> CheckQuestion:
    levels = item["levels"]
    levels_path = join(path, "levels")
    low, high = RUBRIC_LEVELS
    written: tuple[str, ...] = ()
    if not isinstance(levels, list):
        report.add(levels_path, f"must be a list of level descriptions, worst first, not {show(levels)}")
    elif not low <= len(levels) <= high:
        report.add(levels_path, f"needs {low} to {high} levels, found {len(levels)}")
    else:
        for i, level in enumerate(levels):
            if not is_text(level):
                report.add(f"{levels_path}[{i}]", f"must be a level description, not {show(level)}")
        written = tuple(levels)
    pass_level = item.get("pass")
    pass_path = join(path, "pass")
    if "pass" not in item:
        report.add(pass_path, "required: the 0-based level at or above which the answer passes")
    elif isinstance(pass_level, bool) or not isinstance(pass_level, int):
        report.add(pass_path, f"must be a 0-based level number, not {show(pass_level)}")
    elif written and not 0 <= pass_level < len(written):
        report.add(pass_path, f"level {pass_level} is not in the rubric (0 to {len(written) - 1})")
    return CheckQuestion(
        ask=ask,
        kind="rubric",
        levels=written,
        pass_level=pass_level if isinstance(pass_level, int) else None,
        confidence=confidence,
    )
