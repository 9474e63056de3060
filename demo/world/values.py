"""One generator per field meaning, for values the relations file does not decide (scene.py).

A field's meaning comes from its type, `one_of` and name: `requestedAmount` is money, `orderId` an id,
`quoteUrl` a link, `adjuster` a person, `reviewNotes` free text. Each meaning has one generator, so
money always looks like money (two decimals, a plausible size) and an id like an id, and every value
follows the field's type and `one_of` exactly (the engine refuses anything else). A `person` value
must name someone the organization knows (the engine fails a run whose person path resolves to
nobody), so callers pass the people to choose from.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from engine.clock import rfc3339
from engine.document.model import Field

JsonObject = dict[str, Any]
"""Values the protocol leaves open: a step's output, a run's inputs, a story's scripted answers.

Not `dict[str, Json]`: the demo draws and judges them with its expression language (expr.py,
scene.py), which compares and adds whatever a field holds; the server checks them against the
declared fields when they are handed in.
"""

RouteT = TypeVar("RouteT", bound=Mapping[str, Any])
"""A route in wire form, `{to, when?}`: a `Route` of a claim or a work item, or one written out by hand."""

_WORDS = {
    "vendor": [
        "Acme Industrial",
        "Northwind Traders",
        "Globex Supplies",
        "Initech Services",
        "Umbrella Logistics",
    ],
    "customer": ["Contoso Ltd", "Fabrikam Inc", "Tailspin Toys", "Wide World Importers", "Adventure Works"],
    "name": ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Edsger Dijkstra"],
    "service": ["checkout-api", "billing-worker", "search-gateway", "identity-service"],
    "application": ["Salesforce", "GitHub", "Workday", "Snowflake", "Zendesk"],
    "system": ["billing-db", "crm", "payroll", "warehouse-api", "identity-provider"],
    "model": ["MacBook Pro 16-inch M4", "MacBook Air 14-inch M4"],
    "title": [
        "Senior Backend Engineer",
        "Product Designer",
        "Account Executive",
        "Site Reliability Engineer",
    ],
    "city": ["Berlin", "Lyon", "Austin", "Utrecht", "Malmö"],
    "street": ["12 Harbour Road", "48 Linden Avenue", "7 Mill Lane", "233 King Street"],
    "country": ["DE", "FR", "US", "NL", "SE"],
    "currency": ["EUR", "USD", "GBP"],
    "reason": ["Requested by the team lead", "Annual renewal", "Customer request", "Policy requirement"],
}
"""Names by the word of the field that says what is named (`vendorName`: a vendor)."""
_FALLBACK_PEOPLE = ("mira@example.com", "omar@example.com", "lena@example.com", "sam@example.com")
_EMAILS = (
    "jordan.lee@example.net",
    "priya.shah@example.org",
    "tom.becker@example.com",
    "ana.ruiz@example.net",
)
_SENTENCES = [
    "Checked the records and found nothing unusual.",
    "Everything requested is in place and verified against the source system.",
    "Two minor discrepancies were found and corrected; details are in the report.",
    "Reviewed the request against policy; it is within the allowed limits.",
]
_KEYS_IN_DESCRIPTION = re.compile(r"\bwith ([A-Za-z]+(?:, [A-Za-z]+)*(?:,? and [A-Za-z]+)?)")
ID_WORDS = frozenset({"id", "ref", "reference", "number", "ticket", "key", "tag"})
TEXT_WORDS = frozenset({
    "summary", "notes", "note", "description", "findings", "details", "plan", "comment", "analysis",
    "rationale", "justification", "excerpt", "text", "clause",
})  # fmt: skip
MONEY_WORDS = frozenset({
    "amount", "cost", "price", "total", "spend", "budget", "value", "salary", "loss", "limit", "band",
    "deductible", "bonus", "reserve",
})  # fmt: skip
COUNT_WORDS = frozenset({
    "days", "hours", "count", "quantity", "seats", "units", "strikes", "pods", "records", "accounts",
})  # fmt: skip


def words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[0-9]+", name)]


@dataclass(frozen=True)
class Draw:
    """What a generator draws from: the field's own random source, the time, the people."""

    rng: random.Random
    now: datetime
    people: Sequence[str]


def meaning(field: Field) -> str:
    """What the field holds, from its type, `one_of` and name: the key of its generator."""
    if field.one_of:
        return "choice"
    present = set(words(field.name))
    if field.type == "number":
        return _number_meaning(present)
    if field.type == "string":
        return _string_meaning(words(field.name), present)
    return field.type


def _number_meaning(present: set[str]) -> str:
    if {"error", "pct"} <= present:
        return "error-rate"
    if COUNT_WORDS & present:
        return "count"
    if MONEY_WORDS & present:
        return "money"
    if "ratio" in present:
        return "ratio"
    if {"ms", "latency"} & present:
        return "latency"
    if {"score", "risk", "rating"} & present:
        return "score"
    if {"percent", "percentage", "rate", "pct"} & present:
        return "percent"
    return "number"


def _string_meaning(said: list[str], present: set[str]) -> str:
    if {"email", "mail"} & present:
        return "email"
    if {"url", "link"} & present:
        return "url"
    if said and said[-1] in ID_WORDS:
        return "id"
    for key in _WORDS:
        if key in present:
            return f"name:{key}"
    if "version" in present:
        return "version"
    if {"sha", "commit"} & present:
        return "sha"
    if "handle" in present:
        return "handle"
    if "period" in present:
        return "period"
    if ID_WORDS & present:
        return "id"
    if TEXT_WORDS & present:
        return "text"
    return "label"


def value_for(
    field: Field, rng: random.Random, now: datetime | None = None, *, people: Sequence[str] = ()
) -> Any:
    """One valid value for `field` from the generator of its meaning; `person` values from `people`."""
    return GENERATORS[meaning(field)](field, Draw(rng, now or datetime.now(UTC), people))


def values_for(
    fields: Sequence[Field],
    rng: random.Random,
    now: datetime | None = None,
    *,
    include_optional: float = 0.5,
    people: Sequence[str] = (),
) -> JsonObject:
    """Values for every required field and, with the given chance, each optional one."""
    return {
        f.name: value_for(f, rng, now, people=people)
        for f in fields
        if not f.optional or rng.random() < include_optional
    }


def object_keys(description: str | None) -> list[str]:
    """The keys a description names ("... with user, reason and lastLogin"), in order."""
    match = _KEYS_IN_DESCRIPTION.search(description or "")
    if match is None:
        return []
    return [key for key in re.split(r",? and |, ", match.group(1)) if key]


def money(rng: random.Random, low: float = 150, high: float = 25000) -> float:
    return round(rng.uniform(low, high), 2)


def _choice(field: Field, d: Draw) -> Any:
    assert field.one_of is not None
    return d.rng.choice(list(field.one_of))


def _list(field: Field, d: Draw) -> list[Any]:
    item = field.items or Field(name=field.name.rstrip("s"), type="string")
    if item.description is None and field.description is not None:
        item = Field(name=item.name, type=item.type, description=field.description, one_of=item.one_of)
    return [GENERATORS[meaning(item)](item, d) for _ in range(d.rng.randint(1, 3))]


def _object(field: Field, d: Draw) -> JsonObject:
    keys = object_keys(field.description)
    if not keys:
        return {
            "reference": f"{field.name.rstrip('[]')}-{d.rng.randint(100, 999)}",
            "note": d.rng.choice(_SENTENCES),
        }
    return {key: _loose_value(key, d) for key in keys}


def _loose_value(key: str, d: Draw) -> Any:
    """A value for an undeclared object key, typed by its name alone."""
    present = set(words(key))
    if present & {"count", "quantity", "price", "amount", "total", "records"}:
        return GENERATORS[_number_meaning(present)](Field(name=key, type="number"), d)
    if present & {"login", "at", "time"}:
        return rfc3339(d.now - timedelta(days=d.rng.randint(1, 200)))
    if present & {"date"}:
        return (d.now.date() - timedelta(days=d.rng.randint(1, 200))).isoformat()
    if present & {"user", "email"}:
        return d.rng.choice(_EMAILS)
    return GENERATORS[_string_meaning(sorted(present), present)](Field(name=key, type="string"), d)


def _id(field: Field, d: Draw) -> str:
    said = words(field.name)
    return f"{(said[0] if said else 'ref').upper()[:3]}-{d.rng.randint(1000, 9999)}"


def _label(field: Field, d: Draw) -> str:
    return f"{' '.join(words(field.name)).capitalize() or 'Value'} {d.rng.randint(1, 99)}"


def _named(kind: str) -> Callable[[Field, Draw], str]:
    return lambda _field, d: d.rng.choice(_WORDS[kind])


GENERATORS: dict[str, Callable[[Field, Draw], Any]] = {
    "choice": _choice,
    "boolean": lambda _f, d: d.rng.random() < 0.8,
    "money": lambda _f, d: money(d.rng),
    "count": lambda _f, d: d.rng.randint(1, 40),
    "error-rate": lambda _f, d: round(d.rng.uniform(0.1, 2.5), 2),
    "ratio": lambda _f, d: round(d.rng.uniform(0.85, 1.25), 2),
    "latency": lambda _f, d: d.rng.randint(80, 400),
    "score": lambda _f, d: d.rng.randint(1, 10),
    "percent": lambda _f, d: round(d.rng.uniform(0, 100), 1),
    "number": lambda _f, d: d.rng.randint(1, 500),
    "email": lambda _f, d: d.rng.choice(_EMAILS),
    "url": lambda _f, d: f"https://intranet.example.com/docs/{d.rng.randint(1000, 9999)}",
    "id": _id,
    "version": lambda _f, d: f"v{d.rng.randint(1, 4)}.{d.rng.randint(0, 20)}.{d.rng.randint(0, 9)}",
    "sha": lambda _f, d: "".join(d.rng.choice("0123456789abcdef") for _ in range(12)),
    "handle": lambda _f, d: f"@{d.rng.choice(['nightowl', 'pixelpat', 'quietriver', 'urbanfox'])}",
    "period": lambda _f, d: f"{d.now.year}-Q{d.rng.randint(1, 4)}",
    "text": lambda _f, d: d.rng.choice(_SENTENCES),
    "label": _label,
    **{f"name:{kind}": _named(kind) for kind in _WORDS},
    "date": lambda _f, d: (d.now.date() + timedelta(days=d.rng.randint(1, 30))).isoformat(),
    "datetime": lambda _f, d: rfc3339(d.now),
    "person": lambda _f, d: d.rng.choice(list(d.people or _FALLBACK_PEOPLE)),
    "list": _list,
    "object": _object,
}
"""The generator of each meaning. A `datetime` is when the thing happened: now, so times in a run
never run backwards; a `date` is a day ahead (a deadline, a delivery) unless a relation says otherwise."""
