"""Plausible values for declared fields, so demo agents and the demo story fill forms as a person would.

Values follow the field's type and `one_of` exactly (the engine refuses anything else) and take a hint
from the field's name and description, so a demo shows `amount: 4820.5` and a shipping address with a
street and a city rather than `amount: 17` and `{reference: ...}`. A `person` value must name someone
the organization knows (the engine fails a run whose person path resolves to nobody), so callers pass
the people to choose from.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.document.model import Field

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
    "policy": ["Harassment 3.2", "Spam 1.4", "Violent content 2.1", "Impersonation 4.3"],
    "reason": ["Requested by the team lead", "Annual renewal", "Customer request", "Policy requirement"],
}
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
_ID_WORDS = {"id", "ref", "reference", "number", "ticket", "key", "tag"}
TEXT_WORDS = {
    "summary", "notes", "note", "description", "findings", "details", "plan", "comment", "analysis",
    "rationale", "justification", "excerpt", "text", "clause",
}  # fmt: skip


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[0-9]+", name)]


def value_for(
    field: Field, rng: random.Random, now: datetime | None = None, *, people: Sequence[str] = ()
) -> Any:
    """One valid value for `field`; `person` values are drawn from `people`."""
    if field.one_of:
        return rng.choice(list(field.one_of))
    now = now or datetime.now(UTC)
    words = _words(field.name)
    kind = field.type
    if kind == "string":
        return _string_for(words, rng)
    if kind == "number":
        return _number_for(words, rng)
    if kind == "boolean":
        return rng.random() < 0.8
    if kind == "date":
        return (now.date() + timedelta(days=rng.randint(1, 30))).isoformat()
    if kind == "datetime":
        return _datetime(now + timedelta(minutes=rng.randint(2, 20)))
    if kind == "person":
        return rng.choice(list(people or _FALLBACK_PEOPLE))
    if kind == "list":
        item = field.items or Field(name=field.name.rstrip("s"), type="string")
        if item.description is None and field.description is not None:
            item = Field(name=item.name, type=item.type, description=field.description, one_of=item.one_of)
        return [value_for(item, rng, now, people=people) for _ in range(rng.randint(1, 3))]
    if kind == "object":
        return _object_for(field, rng, now)
    raise ValueError(f"unknown field type {kind!r}")


def values_for(
    fields: Sequence[Field],
    rng: random.Random,
    now: datetime | None = None,
    *,
    include_optional: float = 0.5,
    people: Sequence[str] = (),
) -> dict[str, Any]:
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


def _object_for(field: Field, rng: random.Random, now: datetime) -> dict[str, Any]:
    keys = object_keys(field.description)
    if not keys:
        return {
            "reference": f"{field.name.rstrip('[]')}-{rng.randint(100, 999)}",
            "note": rng.choice(_SENTENCES),
        }
    return {key: _loose_value(key, rng, now) for key in keys}


def _loose_value(key: str, rng: random.Random, now: datetime) -> Any:
    """A value for an undeclared object key, typed by its name alone."""
    words = set(_words(key))
    if words & {"count", "quantity", "price", "amount", "total", "records"}:
        return _number_for(sorted(words), rng)
    if words & {"login", "at", "time"}:
        return _datetime(now - timedelta(days=rng.randint(1, 200)))
    if words & {"date"}:
        return (now.date() - timedelta(days=rng.randint(1, 200))).isoformat()
    if words & {"user", "email"}:
        return rng.choice(_EMAILS)
    return _string_for(sorted(words), rng)


def _datetime(when: datetime) -> str:
    return when.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _string_for(words: list[str], rng: random.Random) -> str:
    present = set(words)
    if {"email", "mail"} & present:
        return rng.choice(_EMAILS)
    if {"url", "link"} & present:
        return f"https://intranet.example.com/docs/{rng.randint(1000, 9999)}"
    if words and words[-1] in _ID_WORDS:
        return f"{words[0].upper()[:3]}-{rng.randint(1000, 9999)}"
    for key, choices in _WORDS.items():
        if key in present:
            return rng.choice(choices)
    if "version" in present:
        return f"v{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
    if {"sha", "commit"} & present:
        return "".join(rng.choice("0123456789abcdef") for _ in range(12))
    if "handle" in present:
        return f"@{rng.choice(['nightowl', 'pixelpat', 'quietriver', 'urbanfox'])}"
    if "period" in present:
        return f"{datetime.now(UTC).year}-Q{rng.randint(1, 4)}"
    if _ID_WORDS & present:
        return f"{(words[0] if words else 'ref').upper()[:3]}-{rng.randint(1000, 9999)}"
    if TEXT_WORDS & present:
        return rng.choice(_SENTENCES)
    return f"{' '.join(words).capitalize() or 'Value'} {rng.randint(1, 99)}"


def _number_for(words: list[str], rng: random.Random) -> int | float:
    present = set(words)
    if {"error", "pct"} <= present:
        return round(rng.uniform(0.1, 2.5), 2)
    if {
        "days",
        "hours",
        "count",
        "quantity",
        "seats",
        "units",
        "strikes",
        "pods",
        "records",
        "accounts",
    } & present:
        return rng.randint(1, 40)
    if {
        "amount",
        "cost",
        "price",
        "total",
        "spend",
        "budget",
        "value",
        "salary",
        "loss",
        "limit",
        "band",
        "deductible",
    } & present:
        return round(rng.uniform(150, 25000), 2)
    if {"ratio"} & present:
        return round(rng.uniform(0.85, 1.25), 2)
    if {"ms", "latency"} & present:
        return rng.randint(80, 400)
    if {"score", "risk", "rating"} & present:
        return rng.randint(1, 10)
    if {"percent", "percentage", "rate", "pct"} & present:
        return round(rng.uniform(0, 100), 1)
    return rng.randint(1, 500)
