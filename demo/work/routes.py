"""Choosing a route the way a careful worker would: read each route's `when`, pick one, say why.

The protocol leaves the choice to whoever does the step (spec §3.2), so the demo needs a believable
chooser: it favours the happy path (a `when` with no negative wording) but takes the other routes often
enough that every branch of a process shows up, and it then makes the output agree with the choice
(a step that routes "Not eligible under the policy" does not report `eligible: true`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from demo.world.values import JsonObject, RouteT
from engine.document.model import Field

_NEGATIVE = frozenset({
    "not", "no", "missing", "fail", "failed", "failure", "worse", "short", "unknown", "differ", "differs",
    "lost", "late", "declined", "decline", "hit", "nothing", "end", "expired", "unsigned", "refuse", "cannot",
})  # fmt: skip
_SHORT_WORDS_KEPT = frozenset({"ci"})
_AT_MOST = re.compile(r"\b(\d+(?:\.\d+)?) or less\b")
_OVER = re.compile(r"\bover (\d+(?:\.\d+)?)\b")


@dataclass(frozen=True)
class Choice:
    to: str
    when: str | None
    reason: str


def words(text: str) -> list[str]:
    """Lower-case words of a sentence or a camelCase name ("CI failed", "ciPassed": ci, failed, passed)."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", text)]


def is_negative(when: str | None) -> bool:
    """Whether a route's `when` describes the unhappy case ("Tag missing or CI failed")."""
    return bool(_NEGATIVE & set(words(when or "")))


def choose_route(
    routes: Sequence[Mapping[str, Any]],
    rng: random.Random,
    *,
    happy_weight: float = 3.0,
    unhappy: bool = False,
) -> Choice:
    """One of `routes` (wire form `{to, when?}`), happy paths `happy_weight` times as likely.

    `unhappy` takes one of the unhappy routes when there is any: a misjudged verdict.
    """
    unhappy_routes = [r for r in routes if is_negative(r.get("when"))]
    if unhappy and unhappy_routes:
        return as_choice(rng.choice(unhappy_routes))
    weights = [1.0 if is_negative(r.get("when")) else happy_weight for r in routes]
    return as_choice(rng.choices(list(routes), weights=weights, k=1)[0])


def routes_on_a_verdict(routes: Sequence[Mapping[str, Any]], fields: Sequence[Field]) -> bool:
    """Whether a route's `when` names a boolean of the output ("Not eligible under the policy"): the
    step hands in a verdict, and the route follows from it."""
    booleans = [f.name for f in fields if f.type == "boolean" and f.one_of is None]
    return any(_named(name, set(words(r.get("when") or ""))) for r in routes for name in booleans)


def agreeing_routes(routes: Sequence[RouteT], output: JsonObject, fields: Sequence[Field]) -> list[RouteT]:
    """The routes whose `when` agrees with every boolean of `output` it names.

    "Not eligible under the policy" agrees with `eligible: false` and not with `eligible: true`; a
    route that names no boolean of the output agrees with any.
    """
    booleans = [f for f in fields if f.type == "boolean" and f.one_of is None and f.name in output]
    found = []
    for route in routes:
        when = route.get("when")
        said = set(words(when or ""))
        wanted = not is_negative(when)
        if all(output[f.name] is wanted for f in booleans if _named(f.name, said)):
            found.append(route)
    return found


def as_choice(route: Mapping[str, Any]) -> Choice:
    """A route (wire form) taken, with the reason a worker gives for it."""
    when = route.get("when")
    reason = f"Chose {route['to']}: {when}." if when else f"Chose {route['to']}."
    return Choice(route["to"], when, reason)


def conform(output: JsonObject, fields: Sequence[Field], when: str | None, rng: random.Random) -> JsonObject:
    """`output` adjusted to agree with the chosen route's `when` text, where a field is named in it.

    Booleans named in `when` take its polarity, `one_of` strings it names are kept to those it names,
    and an amount gets the bound a `when` like "Eligible and 100 or less" puts on it.
    """
    if not when:
        return output
    said = set(words(when))
    negative = is_negative(when)
    out = dict(output)
    for field in fields:
        if field.name not in out:
            continue
        if field.type == "boolean" and field.one_of is None and _named(field.name, said):
            out[field.name] = not negative
        elif field.type == "string" and field.one_of:
            named = [c for c in field.one_of if isinstance(c, str) and _mentions(c, said)]
            if named:
                out[field.name] = rng.choice(named)
        elif field.type == "number" and field.one_of is None and "amount" in words(field.name):
            out[field.name] = _bounded(out[field.name], when, rng)
    return out


def _named(name: str, said: set[str]) -> bool:
    return any(w in said for w in words(name) if len(w) >= 3 or w in _SHORT_WORDS_KEPT)


def _mentions(choice: str, said: set[str]) -> bool:
    """A choice is named by its first word or a four-letter stem of it ("part" names `partial`)."""
    head = words(choice)[0] if words(choice) else choice.lower()
    return head in said or any(len(w) >= 4 and head.startswith(w) for w in said)


def _bounded(value: Any, when: str, rng: random.Random) -> Any:
    if (at_most := _AT_MOST.search(when)) is not None:
        limit = float(at_most.group(1))
        return (
            value if isinstance(value, int | float) and value <= limit else round(rng.uniform(10, limit), 2)
        )
    if (over := _OVER.search(when)) is not None:
        limit = float(over.group(1))
        return (
            value
            if isinstance(value, int | float) and value > limit
            else round(rng.uniform(limit + 1, limit * 20), 2)
        )
    return value
