"""The demo's relations file (sample_processes/demo-relations.toml): how generated values hang together.

The file is data, not code: per process, a list of rules for each field (what it equals, what bounds
it, when it is given at all), and per step the conditions of its routes and the words its agents and
approvers use. Everything is read and every expression parsed when the file loads, so a mistake is
one clear error naming its place (`customer-refund.steps.verify_order.output.eligible: ...`), not a
surprise in the middle of a demo. `problems` then checks it against the published processes: every
process, step, field and route it names exists.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from demo.world.expr import Expr, ExprError, placeholders
from demo.world.values import RouteT
from engine.document.model import Process

FILE_NAME = "demo-relations.toml"
RULE_KEYS = frozenset(
    {
        "when",
        "chance",
        "present",
        "equals",
        "values",
        "text",
        "at_least",
        "at_most",
        "count",
        "item",
        "misjudge",
    }
)
STEP_KEYS = frozenset({"output", "routes", "escalate", "reject"})


class RelationsError(ValueError):
    """The relations file cannot be used; the message names the place."""


@dataclass(frozen=True)
class Rule:
    when: Expr | None = None
    chance: float = 1.0
    present: bool | None = None
    equals: Expr | None = None
    values: tuple[Any, ...] | None = None
    text: tuple[str, ...] | None = None
    at_least: tuple[Expr, ...] = ()
    at_most: tuple[Expr, ...] = ()
    count: tuple[int, int] | Expr | None = None
    item: Expr | dict[str, Expr] | None = None
    misjudge: bool = False

    @property
    def gives_value(self) -> bool:
        return self.equals is not None or self.values is not None or self.text is not None

    def reads(self, place: str) -> set[str]:
        """The names of fields of `place` its expressions read."""
        exprs = [e for e in (self.when, self.equals) if e is not None] + [*self.at_least, *self.at_most]
        if isinstance(self.count, Expr):
            exprs.append(self.count)
        for template in self.text or ():
            exprs.extend(placeholders(template))
        if isinstance(self.item, Expr):
            exprs.append(self.item)
        elif isinstance(self.item, dict):
            exprs.extend(self.item.values())
        found = {name for e in exprs for name in e.names()}
        if place == "inputs":
            found |= {name for e in exprs for name in e.inputs()}
        return found


@dataclass(frozen=True)
class StepWords:
    """What a step has besides its fields: route conditions, escalation and rejection templates."""

    routes: dict[str, Expr] = field(default_factory=dict)
    escalate: tuple[str, ...] = ()
    reject: tuple[str, ...] = ()


Rules = dict[str, tuple[Rule, ...]]
"""Field name to its rules, in file order."""


@dataclass(frozen=True)
class Relations:
    fields: dict[tuple[str, str], Rules] = field(default_factory=dict)
    """(process, place) to the rules of its fields; place is `inputs` or `steps.<id>.output`."""
    steps: dict[tuple[str, str], StepWords] = field(default_factory=dict)

    def rules(self, process: str, place: str) -> Rules:
        return self.fields.get((process, place), {})

    def step(self, process: str, step_id: str) -> StepWords:
        return self.steps.get((process, step_id), StepWords())

    def knows(self, process: str) -> bool:
        return any(p == process for p, _ in self.fields) or any(p == process for p, _ in self.steps)

    @classmethod
    def load(cls, path: Path) -> Relations:
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise RelationsError(f"{path}: cannot be read: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise RelationsError(f"{path}: not TOML: {exc}") from None
        try:
            return cls.parse(doc)
        except RelationsError as exc:
            raise RelationsError(f"{path}: {exc}") from None

    @classmethod
    def parse(cls, doc: Mapping[str, Any]) -> Relations:
        fields: dict[tuple[str, str], Rules] = {}
        steps: dict[tuple[str, str], StepWords] = {}
        for process, table in doc.items():
            where = process
            _table(table, where)
            for key, value in table.items():
                if key == "inputs":
                    fields[(process, "inputs")] = _fields(value, f"{where}.inputs")
                elif key == "steps":
                    _table(value, f"{where}.steps")
                    for step_id, step in value.items():
                        at = f"{where}.steps.{step_id}"
                        _table(step, at)
                        unknown = sorted(set(step) - STEP_KEYS)
                        if unknown:
                            raise RelationsError(
                                f"{at}: unknown key {unknown[0]!r} (known: {_known(STEP_KEYS)})"
                            )
                        if "output" in step:
                            fields[(process, f"steps.{step_id}.output")] = _fields(
                                step["output"], f"{at}.output"
                            )
                        steps[(process, step_id)] = StepWords(
                            routes={
                                to: _expr(cond, f"{at}.routes.{to}")
                                for to, cond in _table(step.get("routes", {}), f"{at}.routes").items()
                            },
                            escalate=_templates(step["escalate"], f"{at}.escalate")
                            if "escalate" in step
                            else (),
                            reject=_templates(step["reject"], f"{at}.reject") if "reject" in step else (),
                        )
                else:
                    raise RelationsError(f"{where}: unknown key {key!r} (known: inputs, steps)")
        return cls(fields, steps)

    def problems(self, processes: Mapping[str, Process]) -> list[str]:
        """Places the file names that the processes do not have: each one line."""
        found: list[str] = []
        for (name, place), rules in self.fields.items():
            process = processes.get(name)
            if process is None:
                found.append(f"{name}: no such process")
                continue
            declared = _declared(process, place)
            if declared is None:
                found.append(f"{name}.{place}: no such step, or it has no output")
                continue
            found += [f"{name}.{place}.{f}: not a declared field" for f in rules if f not in declared]
        for (name, step_id), words in self.steps.items():
            process = processes.get(name)
            if process is None:
                if not any(p == name for p, _ in self.fields):
                    found.append(f"{name}: no such process")
                continue
            try:
                step = process.step(step_id)
            except KeyError:
                found.append(f"{name}.steps.{step_id}: no such step")
                continue
            targets = {r.to for r in step.routes or ()}
            found += [
                f"{name}.steps.{step_id}.routes.{to}: not a route of the step"
                for to in words.routes
                if to not in targets
            ]
            if words.routes and set(words.routes) != targets:
                missing = ", ".join(sorted(targets - set(words.routes)))
                if missing:
                    found.append(f"{name}.steps.{step_id}.routes: no condition for {missing}")
            if words.reject and step.kind != "approve":
                found.append(f"{name}.steps.{step_id}.reject: the step is not an approval")
        for (name, place), rules in self.fields.items():
            process = processes.get(name)
            if process is None or not place.startswith("steps."):
                continue
            step_id = place.removeprefix("steps.").removesuffix(".output")
            unchecked = step_id in {s.id for s in process.steps if not s.check}
            found += [
                f"{name}.{place}.{field}: misjudge on a step without a check (nothing would catch it)"
                for field, field_rules in rules.items()
                if unchecked and any(r.misjudge for r in field_rules)
            ]
        return sorted(set(found))


def _declared(process: Process, place: str) -> set[str] | None:
    if place == "inputs":
        return {f.name for f in process.inputs}
    step_id = place.removeprefix("steps.").removesuffix(".output")
    try:
        step = process.step(step_id)
    except KeyError:
        return None
    return None if step.output is None else {f.name for f in step.output}


def _known(keys: frozenset[str]) -> str:
    return ", ".join(sorted(keys))


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RelationsError(f"{where}: expected a table")
    return value


def _expr(value: Any, where: str) -> Expr:
    if not isinstance(value, str):
        raise RelationsError(f"{where}: expected an expression in a string")
    try:
        return Expr.parse(value)
    except ExprError as exc:
        raise RelationsError(f"{where}: {exc}") from None


def _exprs(value: Any, where: str) -> tuple[Expr, ...]:
    items = value if isinstance(value, list) else [value]
    return tuple(_expr(v, f"{where}[{i}]" if isinstance(value, list) else where) for i, v in enumerate(items))


def _templates(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise RelationsError(f"{where}: expected a list of text templates")
    for i, template in enumerate(value):
        try:
            placeholders(template)
        except ExprError as exc:
            raise RelationsError(f"{where}[{i}]: {exc}") from None
    return tuple(value)


def _fields(value: Any, where: str) -> Rules:
    return {name: _rules(spec, f"{where}.{name}") for name, spec in _table(value, where).items()}


def _rules(spec: Any, where: str) -> tuple[Rule, ...]:
    if isinstance(spec, dict):
        return (_rule(spec, where),)
    if isinstance(spec, list) and spec and all(isinstance(s, dict) for s in spec):
        return tuple(_rule(s, f"{where}[{i}]") for i, s in enumerate(spec))
    raise RelationsError(f"{where}: expected a table, or an array of tables, of rules")


def _rule(spec: dict[str, Any], where: str) -> Rule:
    unknown = sorted(set(spec) - RULE_KEYS)
    if unknown:
        raise RelationsError(f"{where}: unknown key {unknown[0]!r} (known: {_known(RULE_KEYS)})")
    chance = spec.get("chance", 1.0)
    if not isinstance(chance, int | float) or isinstance(chance, bool) or not 0 < chance <= 1:
        raise RelationsError(f"{where}.chance: expected a number above 0 and at most 1")
    for key in ("present", "misjudge"):
        if key in spec and not isinstance(spec[key], bool):
            raise RelationsError(f"{where}.{key}: expected true or false")
    values = spec.get("values")
    if values is not None and (not isinstance(values, list) or not values):
        raise RelationsError(f"{where}.values: expected a non-empty list")
    count = spec.get("count")
    if (
        count is not None
        and not isinstance(count, str)
        and not (
            isinstance(count, list)
            and len(count) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in count)
            and count[0] <= count[1]
        )
    ):
        raise RelationsError(f"{where}.count: expected [least, most], whole numbers from 0, or an expression")
    given = [k for k in ("equals", "values", "text") if k in spec]
    if len(given) > 1:
        raise RelationsError(f"{where}: {given[0]} and {given[1]} both give the value; keep one")
    item = spec.get("item")
    return Rule(
        when=_expr(spec["when"], f"{where}.when") if "when" in spec else None,
        chance=float(chance),
        present=spec.get("present"),
        equals=_expr(spec["equals"], f"{where}.equals") if "equals" in spec else None,
        values=tuple(values) if values is not None else None,
        text=_templates(spec["text"], f"{where}.text") if "text" in spec else None,
        at_least=_exprs(spec["at_least"], f"{where}.at_least") if "at_least" in spec else (),
        at_most=_exprs(spec["at_most"], f"{where}.at_most") if "at_most" in spec else (),
        count=(
            _expr(count, f"{where}.count")
            if isinstance(count, str)
            else (count[0], count[1])
            if count is not None
            else None
        ),
        item=(
            {k: _expr(v, f"{where}.item.{k}") for k, v in item.items()}
            if isinstance(item, dict)
            else _expr(item, f"{where}.item")
            if item is not None
            else None
        ),
        misjudge=bool(spec.get("misjudge", False)),
    )


def load_relations(samples: Path, name: str = FILE_NAME) -> Relations:
    """The relations file beside the samples, or none when there is no such file."""
    path = samples / name
    return Relations.load(path) if path.is_file() else Relations()


def conditions(words: StepWords, routes: Sequence[RouteT]) -> list[tuple[RouteT, Expr]]:
    """The step's routes (wire form) each with its declared condition, in the file's order."""
    by_target = {r["to"]: r for r in routes}
    return [(by_target[to], cond) for to, cond in words.routes.items() if to in by_target]
