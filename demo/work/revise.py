"""Redrafting work a model check turned down, as a careful worker would: read each `check:` line, find
the output fields its question is about, and reconsider exactly those (check profile §3).

A refusal, or an unsure verdict a person returned, lists `check: <ask> → <answer>` for each question
that did not pass. The question says what it looked at ("The eligible verdict agrees with the quoted
policy clause, the reason and the days since delivery"), so the redraft follows it:

- a yes/no question answered `no` about a boolean verdict says the verdict is wrong: within the same
  attempt (the worker knows what it said) the verdict is turned over, what follows from it in the
  relations file (an amount) follows again, and the route is the one that agrees with it;
- a text field it names (a summary, an analysis, a clause: values.TEXT_WORDS) is rewritten to say
  what such a question looks for: the verdicts and amounts of the output, the route and why, and the
  line of the process body the run's inputs fall under;
- a list it names gains the values the run data holds under a word of the question ("every system in
  the data map": each `system` an earlier step recorded).

Everything else stays as it was: the check did not question it. Demo people use the same reading to
edit a candidate an unsure check held for them.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from demo.work.draft import Draft
from demo.work.routes import Choice, agreeing_routes, as_choice, choose_route, conform, words
from demo.world.scene import policy_line as scene_policy_line
from demo.world.values import TEXT_WORDS, JsonObject
from engine.document.fields import parse_fields
from engine.document.model import Field

CHECK_PREFIX = "check: "
ARROW = " → "
_QUOTING_WORDS = frozenset({"clause", "policy", "rule"})
_TOKEN = re.compile(r"[a-z0-9_-]+")


@dataclass(frozen=True)
class CheckLine:
    """One `check: <ask> → <answer>` line of a refusal or an escalation."""

    ask: str
    answer: str

    @classmethod
    def parse(cls, line: str) -> CheckLine | None:
        if not line.startswith(CHECK_PREFIX) or ARROW not in line:
            return None
        ask, answer = line[len(CHECK_PREFIX) :].rsplit(ARROW, 1)
        return cls(ask.strip(), answer.strip())

    @property
    def said_no(self) -> bool:
        """A yes/no question answered below its pass threshold."""
        return self.answer.startswith("no (")

    def __str__(self) -> str:
        return f"{CHECK_PREFIX}{self.ask}{ARROW}{self.answer}"


def check_lines(issues: Iterable[str]) -> list[CheckLine]:
    """The `check:` lines among `issues`, in order."""
    return [line for issue in issues if (line := CheckLine.parse(issue)) is not None]


def named_fields(ask: str, fields: Sequence[Field]) -> list[Field]:
    """The fields a question names, by name ("decisionSummary") or in words ("the days since delivery")."""
    said = words(ask)
    return [field for field in fields if _contains(said, words(field.name))]


def is_text(field: Field) -> bool:
    """A free-text field, by its name: what a worker rewrites when a question finds it wanting."""
    return field.type == "string" and field.one_of is None and bool(TEXT_WORDS & set(words(field.name)))


def _contains(said: list[str], part: list[str]) -> bool:
    n = len(part)
    return n > 0 and any(said[i : i + n] == part for i in range(len(said) - n + 1))


@dataclass(frozen=True)
class Context:
    """What a worker reads besides the step: the run data (inputs and steps) and the process body."""

    data: Mapping[str, Any]
    """The run data (`claim.data`, a run view's `data`), read the way world/scene.py reads it."""
    body: str = ""

    @property
    def inputs(self) -> JsonObject:
        return self.data.get("inputs") or {}


def policy_line(context: Context) -> str | None:
    """The line of the process body the run's inputs fall under (scene.policy_line)."""
    return scene_policy_line(context.inputs, context.body)


def statement(field: Field, output: JsonObject, choice: Choice | None, context: Context) -> str:
    """Text for `field` that states what a check on it looks for, from the rest of the work."""
    line = policy_line(context)
    if line is not None and _QUOTING_WORDS & set(words(field.name)):
        return line
    facts = [_fact(name, value) for name, value in output.items() if name != field.name]
    parts = []
    if shown := [fact for fact in facts if fact]:
        parts.append(f"Verdict: {', '.join(shown)}.")
    if choice is not None:
        parts.append(choice.reason)
    if line is not None:
        parts.append(f"Policy applied: {line}")
    return " ".join(parts) or str(output.get(field.name, ""))


def _fact(name: str, value: Any) -> str | None:
    if isinstance(value, bool):
        return f"{name} {'yes' if value else 'no'}"
    if isinstance(value, int | float):
        return f"{name} {int(value) if value == int(value) else value}"
    return None


def run_data_values(ask: str, context: Context) -> list[str]:
    """Strings earlier steps recorded under a word of the question, first seen first."""
    said = set(words(ask))
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and key.lower() in said:
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for record in (context.data.get("steps") or {}).values():
        if isinstance(record, dict):
            walk(record.get("output"))
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Revision:
    work: Draft
    lines: tuple[CheckLine, ...]
    reconsidered: tuple[str, ...]
    """Fields the questions named, in the order named."""
    changed: tuple[str, ...]
    """Fields whose value the revision changed."""
    route_changed: bool

    def sentence(self) -> str:
        """What the check answered and what the worker did about it, for a summary."""
        asked = "; ".join(f"'{line.ask}' → {line.answer}" for line in self.lines)
        text = f"Revised after the model check answered {asked}."
        if not self.reconsidered:
            return text
        done = [
            f"{name} is now {json.dumps(self.work.output[name])}"
            if isinstance(self.work.output[name], bool | int | float)
            else f"{name} rewritten"
            for name in self.changed
        ]
        if self.route_changed and self.work.choice is not None:
            done.append(f"the route is now {self.work.choice.to}")
        result = ", ".join(done) if done else "nothing needed changing"
        return f"{text} Reconsidered {_listed(self.reconsidered)}: {result}."


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def revise(
    work: Draft, lines: Sequence[CheckLine], rng: random.Random, context: Context, *, turn_over: bool
) -> Revision:
    """`work` reconsidered for each check line; `turn_over` when `work` is what the check judged."""
    output = dict(work.output)
    reconsidered: list[str] = []
    turned: list[str] = []
    texts: list[tuple[Field, CheckLine]] = []
    for line in lines:
        for field in named_fields(line.ask, work.fields):
            if field.name not in output or field.name in reconsidered:
                continue
            reconsidered.append(field.name)
            if field.type == "boolean" and field.one_of is None:
                if turn_over and line.said_no:
                    output[field.name] = not output[field.name]
                    turned.append(field.name)
            elif is_text(field):
                texts.append((field, line))
            elif field.type == "list" and isinstance(output[field.name], list):
                output[field.name] = _extended(field, output[field.name], run_data_values(line.ask, context))
    choice = work.choice
    if work.declared:
        output = work.settled(output, turned)
        choice = work.route(output, rng)
    else:
        if turned and work.routes:
            agreeing = agreeing_routes(work.routes, output, work.fields)
            if agreeing and (choice is None or choice.to not in {r["to"] for r in agreeing}):
                choice = choose_route(agreeing, rng)
        if choice is not None:
            output = conform(output, work.fields, choice.when, rng)
    for field, _line in texts:
        output[field.name] = statement(field, output, choice, context)
    revised = replace(work, output=output, choice=choice)
    changed = tuple(name for name in output if output[name] != work.output.get(name))
    route_changed = (choice.to if choice else None) != (work.choice.to if work.choice else None)
    return Revision(revised, tuple(lines), tuple(reconsidered), changed, route_changed)


def _extended(field: Field, current: list[Any], found: list[str]) -> list[Any]:
    item = field.items
    if item is not None and (item.type != "string" or item.one_of is not None):
        found = [v for v in found if item.one_of is not None and v in item.one_of]
    return current + [v for v in found if v not in current]


def edited_output(
    requirements: Mapping[str, Any],
    candidate: Mapping[str, Any],
    lines: Sequence[CheckLine],
    context: Context,
) -> tuple[JsonObject, list[str]] | None:
    """A person's edit of a held candidate: the text fields the unsure questions name, rewritten.

    None when the questions name no text field of the candidate (a verdict a person confirms or sends
    back, but does not reword). `requirements` is the work item (`output`, `next`), `candidate` the
    escalation's held `StepRecord`.
    """
    fields, _ = parse_fields(requirements.get("output") or {}, "output")
    output = dict(candidate.get("output") or {})
    route = next((r for r in requirements.get("next") or () if r.get("to") == candidate.get("next")), None)
    choice = as_choice(route) if route is not None else None
    edited: list[str] = []
    for line in lines:
        for field in named_fields(line.ask, fields):
            if is_text(field) and field.name in output and field.name not in edited:
                edited.append(field.name)
    if not edited:
        return None
    for name in edited:
        field = next(f for f in fields if f.name == name)
        output[name] = statement(field, output, choice, context)
    return output, edited
