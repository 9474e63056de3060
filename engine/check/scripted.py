"""An evaluator that answers from a TOML file, for demos, tests and servers without a model.

A person writes the answers a model would give, keyed by process, step and the exact question text.
Unlisted questions pass by default, so a file needs entries only for the cases it wants to steer.
The file is read once, when the evaluator is built, so a mistake in it stops the server at start with
the key named, instead of turning into `error` verdicts later.

```toml
default_yes = 0.95          # yes-probability for a yes/no question without an entry (default 1.0)
default_confidence = 0.9    # for choice and rubric answers that give none (default 1.0)

[[answer]]
process = "vendor-check"
step = "check_vendor"
ask = "What does the summary do?"
choice = "hedges"           # or `yes = 0.3`, or `level = 2`
confidence = 0.95
```
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.check.evaluator import (
    Answer,
    CheckConfigError,
    CheckRequest,
    Choice,
    EvaluatorError,
    Level,
    YesNo,
)

_TOP_KEYS = ("default_yes", "default_confidence", "answer")
_ENTRY_KEYS = ("process", "step", "ask", "yes", "choice", "level", "confidence")
_ANSWER_KEYS = ("yes", "choice", "level")


@dataclass(frozen=True)
class _Entry:
    answer: str
    """Which of `yes`, `choice`, `level` the entry gives."""
    value: float | str | int
    confidence: float | None


def _unit(where: str, value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise CheckConfigError(f"{where}: must be a number from 0 to 1, got {value!r}")
    return float(value)


def _entry(where: str, table: Any) -> tuple[tuple[str, str, str], _Entry]:
    if not isinstance(table, dict):
        raise CheckConfigError(f"{where}: must be a table")
    for key in table:
        if key not in _ENTRY_KEYS:
            raise CheckConfigError(f"{where}.{key}: unknown key")
    names = []
    for key in ("process", "step", "ask"):
        value = table.get(key)
        if not isinstance(value, str) or not value:
            raise CheckConfigError(f"{where}.{key}: required, a non-empty string")
        names.append(value)
    given = [key for key in _ANSWER_KEYS if key in table]
    if len(given) != 1:
        raise CheckConfigError(f"{where}: needs exactly one of yes, choice, level; found {len(given)}")
    kind = given[0]
    value = table[kind]
    if kind == "yes":
        value = _unit(f"{where}.yes", value)
        if "confidence" in table:
            raise CheckConfigError(f"{where}.confidence: a yes answer carries no confidence")
    elif kind == "choice" and (not isinstance(value, str) or not value):
        raise CheckConfigError(f"{where}.choice: must be a non-empty string, got {value!r}")
    elif kind == "level" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise CheckConfigError(f"{where}.level: must be a whole number from 0, got {value!r}")
    confidence = _unit(f"{where}.confidence", table["confidence"]) if "confidence" in table else None
    return (names[0], names[1], names[2]), _Entry(kind, value, confidence)


def parse_answers(text: str, source: str) -> tuple[float, float, dict[tuple[str, str, str], _Entry]]:
    """(default_yes, default_confidence, entries by (process, step, ask)). `source` prefixes errors."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CheckConfigError(f"{source}: not valid TOML: {exc}") from exc
    for key in doc:
        if key not in _TOP_KEYS:
            raise CheckConfigError(f"{source}: {key}: unknown key")
    default_yes = _unit(f"{source}: default_yes", doc.get("default_yes", 1.0))
    default_confidence = _unit(f"{source}: default_confidence", doc.get("default_confidence", 1.0))
    tables = doc.get("answer", [])
    if not isinstance(tables, list):
        raise CheckConfigError(f"{source}: answer: must be an array of tables, written [[answer]]")
    entries: dict[tuple[str, str, str], _Entry] = {}
    for i, table in enumerate(tables):
        key, entry = _entry(f"{source}: answer[{i}]", table)
        if key in entries:
            raise CheckConfigError(
                f"{source}: answer[{i}]: a second answer for {key[2]!r} in {key[0]}.{key[1]}"
            )
        entries[key] = entry
    return default_yes, default_confidence, entries


class ScriptedEvaluator:
    """Answers from a file. Its `model` says so, so nobody mistakes a scripted verdict for a model's."""

    def __init__(
        self,
        name: str,
        default_yes: float,
        default_confidence: float,
        entries: dict[tuple[str, str, str], _Entry],
    ) -> None:
        self.model = f"scripted:{name}"
        self._default_yes = default_yes
        self._default_confidence = default_confidence
        self._entries = entries

    @classmethod
    def load(cls, path: Path) -> ScriptedEvaluator:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CheckConfigError(f"check.answers: cannot read {path}: {exc.strerror}") from exc
        return cls(path.name, *parse_answers(text, path.name))

    async def answer(self, request: CheckRequest) -> Answer:
        question = request.question
        entry = self._entries.get((request.process, request.step_id, question.ask))
        if entry is None:
            return self._default(request)
        given = {"yes": "yes_no", "choice": "choice", "level": "rubric"}[entry.answer]
        if given != question.kind:
            raise EvaluatorError(
                f"{self.model}: the entry for {question.ask!r} gives `{entry.answer}` "
                f"but the question is {question.kind}"
            )
        confidence = self._default_confidence if entry.confidence is None else entry.confidence
        if entry.answer == "yes":
            return YesNo(float(entry.value))
        if entry.answer == "choice":
            return Choice(str(entry.value), confidence)
        return Level(int(entry.value), confidence)

    def _default(self, request: CheckRequest) -> Answer:
        """A yes/no gets `default_yes`; a choice or rubric its first passing answer."""
        question = request.question
        if question.kind == "yes_no":
            return YesNo(self._default_yes)
        if question.kind == "choice" and question.pass_choices:
            return Choice(question.pass_choices[0], self._default_confidence)
        if question.kind == "rubric" and question.pass_level is not None:
            return Level(question.pass_level, self._default_confidence)
        raise EvaluatorError(f"{self.model}: question {question.ask!r} has no passing answer to default to")

    async def aclose(self) -> None:
        """Nothing to release."""
