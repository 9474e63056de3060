"""Values built from the run itself: the scene a demo worker drafts in, and `settle`, which fills and
keeps in line the fields of one place (the inputs, or one step's output) by the relations file.

A scene is what a value may be built from: the run's data so far (inputs and earlier outputs, as
`claim` or `get_run` give them), the process body, the time, the people, and a seed of the run. Each
field draws from a random source seeded by the run and the field's place, so a run's facts hold
still: every attempt at `verify_order` finds the same order total, and a rework changes only what
the rejection asked to change (`fresh`).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import string
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from demo.world.expr import Expr, Resolver, as_time, lookup, render
from demo.world.relations import Relations, Rule, Rules, StepWords
from demo.world.values import GENERATORS, Draw, JsonObject, RouteT, meaning
from engine.clock import rfc3339
from engine.document.fields import check_values
from engine.document.model import Field

DEFAULT_COUNT = (1, 3)
_TOKEN_CHARS = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Scene:
    """What a value may be built from."""

    process: str
    seed: str
    """The run's own seed (`run_seed`): the same run draws the same facts."""
    now: datetime
    data: Mapping[str, Any] = field(default_factory=dict)
    """The run data: `{inputs, steps}` as `claim.data` and `get_run` give it."""
    body: str = ""
    people: tuple[str, ...] = ()
    relations: Relations = field(default_factory=Relations)

    @property
    def inputs(self) -> Mapping[str, Any]:
        return self.data.get("inputs") or {}

    def rng(self, place: str, name: str, salt: str = "") -> random.Random:
        return random.Random(f"{self.seed}:{place}:{name}:{salt}")

    def words(self, step_id: str) -> StepWords:
        return self.relations.step(self.process, step_id)

    def rules(self, place: str) -> Rules:
        return self.relations.rules(self.process, place)

    def render(
        self, template: str, rng: random.Random, output: Mapping[str, Any] | None = None, place: str = ""
    ) -> str:
        """A template of the relations file filled in from this run (and `output`, the values of
        `place` so far)."""
        return render(template, Reader(self, place, output or {}, rng), text_of)


def run_seed(seed: int, process: str, inputs: Mapping[str, Any]) -> str:
    """The seed of a run: the demo's seed and what the run was started with, so a story that starts
    the same run again meets the same facts (run ids are random, inputs are drawn from the seed)."""
    canonical = json.dumps(inputs, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{seed}:{process}:{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"


def place_of(step_id: str) -> str:
    return f"steps.{step_id}.output"


def text_of(value: Any) -> str:
    """How a value reads in generated text: money with two decimals, lists joined, days as dates."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}" if not value.is_integer() else f"{int(value):,}"
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return ", ".join(text_of(v) for v in value)
    return str(value)


def policy_line(inputs: Mapping[str, Any], body: str, heading: str | None = None) -> str | None:
    """The list item of the body the run's inputs fall under, after the heading it sits under.

    "- `damaged`, `wrong_item`: refund in full." under "## Refund policy" is the line for a run whose
    `reason` is `damaged`. With `heading`, only the list under that heading is read.
    """
    values = {v.lower() for v in inputs.values() if isinstance(v, str) and 2 < len(v) <= 40}
    current: str | None = None
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            current = line.lstrip("#").strip()
        elif line.startswith(("- ", "* ")) and (heading is None or current == heading):
            text = line[2:].replace("`", "").strip()
            tokens = {t.strip(".,:;").lower() for t in text.replace(",", " ").split()}
            if values & tokens:
                return f"{current}: {text}" if current else text
    return None


class Reader(Resolver):
    """Paths and scene functions for the expressions of one field's rules."""

    def __init__(
        self, scene: Scene, place: str, sibling: Mapping[str, Any], rng: random.Random | None = None
    ) -> None:
        self.scene = scene
        self.place = place
        self.sibling = sibling
        self.rng = rng or random.Random(0)

    def path(self, parts: tuple[str, ...]) -> Any:
        head = parts[0]
        if parts == ("now",):
            return self.scene.now
        if head == "inputs":
            inputs = self.sibling if self.place == "inputs" else self.scene.inputs
            return lookup(inputs, parts[1:])
        if head == "steps":
            return lookup(self.scene.data.get("steps") or {}, parts[1:])
        if head in self.sibling:
            return lookup(self.sibling, parts)
        return lookup(self.scene.inputs, parts)

    def call(self, name: str, args: list[Any]) -> Any:
        rng = self.rng
        if name == "policy":
            return policy_line(self.scene.inputs, self.scene.body, args[0] if args else None)
        if name == "pick":
            return rng.choice(args) if args else None
        if name in ("randint", "uniform") and len(args) == 2 and all(_is_number(a) for a in args):
            low, high = sorted(args)
            return rng.randint(int(low), int(high)) if name == "randint" else rng.uniform(low, high)
        if name in ("digits", "letters", "alnum", "hex") and len(args) == 1 and _is_number(args[0]):
            chars = {
                "digits": string.digits,
                "letters": string.ascii_uppercase,
                "alnum": _TOKEN_CHARS,
                "hex": "0123456789abcdef",
            }[name]
            return "".join(rng.choice(chars) for _ in range(int(args[0])))
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def settle(
    fields: Sequence[Field],
    scene: Scene,
    place: str,
    given: Mapping[str, Any] | None = None,
    *,
    fixed: Collection[str] = (),
    fresh: Mapping[str, str] | None = None,
    include_optional: float = 0.5,
) -> JsonObject:
    """The values of `fields` at `place`, built from the scene and kept to the relations.

    A field's rule is the first of its rules that applies. A value in `given` stays unless the rule
    gives the field its value (then the rule decides again, reading what changed); a `fixed` one
    always stays (a verdict a worker chose or turned over). The rule's bounds and `present` hold for
    every other. `fresh` names fields drawn anew,
    with the salt given, as a rework does. Fields come back in their declared order.
    """
    rules = scene.rules(place)
    out = dict(given or {})
    for f in _ordered(fields, rules, place):
        salt = (fresh or {}).get(f.name, "")
        rng = scene.rng(place, f.name, salt)
        keep = f.name in out and (f.name in fixed or not salt)
        value = _settle_one(
            f, rules.get(f.name, ()), scene, place, out, rng, keep, f.name in fixed, include_optional
        )
        if value is _OMIT:
            out.pop(f.name, None)
        else:
            out[f.name] = value
    return {f.name: out[f.name] for f in fields if f.name in out}


def misjudged(fields: Sequence[Field], scene: Scene, place: str, output: Mapping[str, Any]) -> list[str]:
    """The verdicts of `output` the relations file lets a first draft get wrong (`misjudge`)."""
    rules = scene.rules(place)
    return [
        f.name
        for f in fields
        if f.type == "boolean" and f.name in output and any(r.misjudge for r in rules.get(f.name, ()))
    ]


def declared_route(
    words: StepWords, routes: Sequence[RouteT], scene: Scene, place: str, output: Mapping[str, Any]
) -> RouteT | None:
    """The first route whose declared condition holds for `output`; None when none is declared or holds."""
    reader = Reader(scene, place, output)
    by_target = {r["to"]: r for r in routes}
    for to, condition in words.routes.items():
        if to in by_target and condition.holds(reader):
            return by_target[to]
    return None


class _Omit:
    pass


_OMIT = _Omit()


def _ordered(fields: Sequence[Field], rules: Rules, place: str) -> list[Field]:
    """Fields after the fields of the same place their rules read; declared order otherwise."""
    names = {f.name for f in fields}
    needs = {
        f.name: {n for r in rules.get(f.name, ()) for n in r.reads(place)} & names - {f.name} for f in fields
    }
    done: list[Field] = []
    waiting = list(fields)
    while waiting:
        ready = [f for f in waiting if needs[f.name] <= {d.name for d in done}]
        if not ready:  # a cycle: the file's mistake, read in declared order
            ready = waiting[:1]
        done.append(ready[0])
        waiting.remove(ready[0])
    return done


def _settle_one(
    f: Field,
    rules: Iterable[Rule],
    scene: Scene,
    place: str,
    out: JsonObject,
    rng: random.Random,
    keep: bool,
    fixed: bool,
    include_optional: float,
) -> Any:
    reader = Reader(scene, place, out, rng)
    rule = next(
        (
            r
            for r in rules
            if (r.when is None or r.when.holds(reader)) and (r.chance >= 1 or rng.random() < r.chance)
        ),
        None,
    )
    present = rule.present if rule is not None else None
    if present is False and f.optional:
        return _OMIT
    gives = rule is not None and rule.gives_value
    lows = [v for e in rule.at_least if (v := e.evaluate(reader)) is not None] if rule is not None else []
    highs = [v for e in rule.at_most if (v := e.evaluate(reader)) is not None] if rule is not None else []
    if keep and (fixed or not gives):
        value = out[f.name]
    elif f.name not in out and f.optional and present is None and rng.random() >= include_optional:
        return _OMIT
    elif not gives and lows and highs and f.type in ("number", "date", "datetime"):
        return _valid(f, _wire(f, _bounded(f, None, lows, highs, rng, draw=True)), scene, rng)
    else:
        value = _value(f, rule, scene, place, out, reader, rng)
    if not fixed:
        value = _bounded(f, value, lows, highs, rng, draw=False)
    return _valid(f, _wire(f, value), scene, rng)


def _value(
    f: Field,
    rule: Rule | None,
    scene: Scene,
    place: str,
    out: Mapping[str, Any],
    reader: Reader,
    rng: random.Random,
) -> Any:
    if rule is not None:
        if rule.equals is not None:
            return rule.equals.evaluate(reader)
        if rule.values is not None:
            return rng.choice(list(rule.values))
        if rule.text is not None:
            return scene.render(rng.choice(list(rule.text)), rng, out, place)
        if f.type == "list" and (rule.item is not None or rule.count is not None):
            return _items(rule, f, scene, reader, rng)
    reused = _reused(f, scene, place)
    if reused is not None:
        return reused
    return GENERATORS[meaning(f)](f, Draw(rng, scene.now, scene.people))


def _items(rule: Rule, f: Field, scene: Scene, reader: Reader, rng: random.Random) -> list[Any]:
    """A list's items, each different (by its value, or an object's first key)."""
    if isinstance(rule.count, Expr):
        counted = rule.count.evaluate(reader)
        wanted = int(counted) if _is_number(counted) and counted >= 0 else 0
    else:
        low, high = rule.count or DEFAULT_COUNT
        wanted = rng.randint(low, high)
    items: list[Any] = []
    seen: set[str] = set()
    for _ in range(wanted * 10):
        if len(items) >= wanted:
            break
        item = _item(rule.item, f, scene, reader, rng)
        key = text_of(next(iter(item.values()), None) if isinstance(item, dict) else item)
        if item is not None and key not in seen:
            seen.add(key)
            items.append(item)
    return items


def _item(
    item: Expr | dict[str, Expr] | None, f: Field, scene: Scene, reader: Reader, rng: random.Random
) -> Any:
    if item is None:
        inner = f.items or Field(name=f.name.rstrip("s"), type="string")
        return GENERATORS[meaning(inner)](inner, Draw(rng, scene.now, scene.people))
    if isinstance(item, Expr):
        return _plain(item.evaluate(reader))
    return {key: _plain(expr.evaluate(reader)) for key, expr in item.items()}


def _plain(value: Any) -> Any:
    """An evaluated value as JSON: days and times in their wire form."""
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def _reused(f: Field, scene: Scene, place: str) -> Any:
    """The value of a field of the same name the run already holds, so ids and names agree across steps."""
    candidates: list[Any] = []
    if place != "inputs":
        candidates.append(scene.inputs.get(f.name))
    for step_id, record in (scene.data.get("steps") or {}).items():
        if place_of(step_id) == place:
            continue  # the step's own earlier attempt: a rework draws its facts as the first did
        if isinstance(record, Mapping) and isinstance(record.get("output"), Mapping):
            candidates.append(record["output"].get(f.name))
    for value in candidates:
        if value is not None and not check_values((f,), {f.name: value}, "x"):
            return value
    return None


def _bounded(
    f: Field, value: Any, lows: list[Any], highs: list[Any], rng: random.Random, *, draw: bool
) -> Any:
    """`value` kept between the highest lower bound and the lowest upper bound (the upper wins when
    they cross); drawn between them when `draw`, or when it is outside."""
    if not lows and not highs:
        return value
    if f.type == "number":
        return _bounded_number(f, value, lows, highs, rng, draw)
    if f.type in ("date", "datetime"):
        return _bounded_time(f, value, lows, highs, rng, draw)
    return value


def _bounded_number(
    f: Field, value: Any, lows: list[Any], highs: list[Any], rng: random.Random, draw: bool
) -> Any:
    numbers_low = [v for v in lows if _is_number(v)]
    numbers_high = [v for v in highs if _is_number(v)]
    lo = max(numbers_low) if numbers_low else None
    hi = min(numbers_high) if numbers_high else None
    if lo is not None and hi is not None and lo > hi:
        lo = hi
    whole = meaning(f) != "money" and all(isinstance(v, int) for v in [*numbers_low, *numbers_high])
    inside = _is_number(value) and (lo is None or value >= lo) and (hi is None or value <= hi)
    if inside and not draw:
        return value
    if lo is not None and hi is not None:
        if whole and math.ceil(lo) <= math.floor(hi):
            return rng.randint(math.ceil(lo), math.floor(hi))
        return _cents(rng.uniform(lo, hi), lo, hi)
    bound = lo if lo is not None else hi
    return bound


def _cents(x: float, lo: float, hi: float) -> float:
    """`x` to the cent, still between `lo` and `hi` (each bound itself when they share a cent)."""
    value = round(x, 2)
    if value > hi:
        value = math.floor(hi * 100) / 100
    if value < lo:
        value = math.ceil(lo * 100) / 100
    return value if lo <= value <= hi else lo


def _bounded_time(
    f: Field, value: Any, lows: list[Any], highs: list[Any], rng: random.Random, draw: bool
) -> Any:
    def as_kind(v: Any) -> Any:
        v = as_time(v)
        if f.type == "date":
            return v.astimezone(UTC).date() if isinstance(v, datetime) else v if isinstance(v, date) else None
        if isinstance(v, datetime):
            return v
        return datetime(v.year, v.month, v.day, tzinfo=UTC) if isinstance(v, date) else None

    found_low = [t for v in lows if (t := as_kind(v)) is not None]
    found_high = [t for v in highs if (t := as_kind(v)) is not None]
    lo = max(found_low) if found_low else None
    hi = min(found_high) if found_high else None
    if lo is not None and hi is not None and lo > hi:
        lo = hi
    current = as_kind(value)
    if current is not None and not draw and (lo is None or current >= lo) and (hi is None or current <= hi):
        return value
    if lo is not None and hi is not None:
        if f.type == "date":
            return lo + timedelta(days=rng.randint(0, (hi - lo).days))
        seconds = int((hi - lo).total_seconds())
        return lo + timedelta(seconds=rng.randint(0, max(seconds, 0)))
    return lo if lo is not None else hi


def _wire(f: Field, value: Any) -> Any:
    """A value as the field's wire type: days and times as text, whole money kept exact."""
    value = as_time(value) if f.type in ("date", "datetime") else value
    if f.type == "date":
        if isinstance(value, datetime):
            return value.astimezone(UTC).date().isoformat()
        return value.isoformat() if isinstance(value, date) else value
    if f.type == "datetime":
        if isinstance(value, datetime):
            return rfc3339(value)
        return (
            rfc3339(datetime(value.year, value.month, value.day, tzinfo=UTC))
            if isinstance(value, date)
            else value
        )
    if f.type == "string" and value is not None and not isinstance(value, str):
        return text_of(value)
    if f.type == "list" and isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _valid(f: Field, value: Any, scene: Scene, rng: random.Random) -> Any:
    """`value` when the engine would take it; otherwise what the field's meaning makes (a relation
    that read a missing value, a person nobody knows)."""
    known = f.type != "person" or not scene.people or value in scene.people
    if value is not None and known and not check_values((f,), {f.name: value}, "x"):
        return value
    return GENERATORS[meaning(f)](f, Draw(rng, scene.now, scene.people))
