"""An evaluator that answers from a TOML file, for demos, tests and servers without a model.

A person writes the answers a model would give, keyed by process, step and the exact question text.
Unlisted questions pass by default, so a file needs entries only for the cases it wants to steer.
An entry may also name a `when`: run inputs or output fields the submission must have, so one file
can let some submissions pass, fail others and leave others unsure (a demo shows every path). For one
question, entries with a `when` are tried in file order, and the one without (at most one) answers the
rest. The file is read once, when the evaluator is built, so a mistake in it stops the server at start with
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

[[answer]]
process = "vendor-check"
step = "check_vendor"
ask = "The cleared verdict matches what the attached report says."
yes = 0.2
when = { inputs = { vendorName = "Globex" }, output = { cleared = true } }
```
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.evaluator.base import (
    Answer,
    CheckConfigError,
    CheckRequest,
    Choice,
    EvaluatorError,
    Level,
    YesNo,
)

_TOP_KEYS = ("default_yes", "default_confidence", "answer")
_ENTRY_KEYS = ("process", "step", "ask", "yes", "choice", "level", "confidence", "when")
_ANSWER_KEYS = ("yes", "choice", "level")
_WHEN_KEYS = ("inputs", "output")

Condition = tuple[str, str, Any]
"""(`inputs` or `output`, field name, the value it must have)."""


@dataclass(frozen=True)
class _Entry:
    answer: str
    """Which of `yes`, `choice`, `level` the entry gives."""
    value: float | str | int
    confidence: float | None
    when: tuple[Condition, ...] = ()

    def matches(self, request: CheckRequest) -> bool:
        for part, name, expected in self.when:
            given = request.output if part == "output" else request.run_data.get("inputs")
            if not isinstance(given, dict) or name not in given or not _same(given[name], expected):
                return False
        return True


def _same(given: Any, expected: Any) -> bool:
    """JSON equality: `true` is not `1` here, though Python says it is."""
    return isinstance(given, bool) == isinstance(expected, bool) and given == expected


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
    when = _when(f"{where}.when", table["when"]) if "when" in table else ()
    return (names[0], names[1], names[2]), _Entry(kind, value, confidence, when)


def _when(where: str, table: Any) -> tuple[Condition, ...]:
    if not isinstance(table, dict) or not table:
        raise CheckConfigError(f"{where}: must be a table naming inputs or output fields")
    conditions: list[Condition] = []
    for part, fields in table.items():
        if part not in _WHEN_KEYS:
            raise CheckConfigError(f"{where}.{part}: unknown key (allowed: inputs, output)")
        if not isinstance(fields, dict) or not fields:
            raise CheckConfigError(f"{where}.{part}: must be a table of field = value")
        conditions.extend((part, name, value) for name, value in fields.items())
    return tuple(conditions)


Entries = dict[tuple[str, str, str], list[_Entry]]


def parse_answers(text: str, source: str) -> tuple[float, float, Entries]:
    """(default_yes, default_confidence, entries by (process, step, ask), conditional ones first).

    `source` prefixes errors.
    """
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
    entries: Entries = {}
    for i, table in enumerate(tables):
        entry_key, entry = _entry(f"{source}: answer[{i}]", table)
        same = entries.setdefault(entry_key, [])
        if any(other.when == entry.when for other in same):
            raise CheckConfigError(
                f"{source}: answer[{i}]: a second answer for {entry_key[2]!r} in {entry_key[0]}.{entry_key[1]}"
                + (" with the same when" if entry.when else "")
            )
        same.append(entry)
    for same in entries.values():
        same.sort(key=lambda entry: not entry.when)
    return default_yes, default_confidence, entries


class ScriptedEvaluator:
    """Answers from a file. Its `model` says so, so nobody mistakes a scripted verdict for a model's."""

    def __init__(
        self,
        name: str,
        default_yes: float,
        default_confidence: float,
        entries: Entries,
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
        candidates = self._entries.get((request.process, request.step_id, question.ask), [])
        entry = next((e for e in candidates if e.matches(request)), None)
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
