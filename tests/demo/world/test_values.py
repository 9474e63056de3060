"""Demo values: every generated value passes the engine's own field check, and reads plausibly."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from demo.world.values import meaning, object_keys, value_for, values_for
from engine.document import load_path
from engine.document.fields import check_values, parse_field
from engine.document.model import Field
from tests.demo.demo_support import SAMPLES

NOW = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)
PEOPLE = ("mira@example.com", "lena@example.com")


def field(name: str, declaration: object) -> Field:
    parsed, issues = parse_field(name, declaration, name)
    assert issues == [] and parsed is not None
    return parsed


def sample_fields() -> list[tuple[str, tuple[Field, ...]]]:
    found: list[tuple[str, tuple[Field, ...]]] = []
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        process = load_path(folder).process
        assert process is not None, folder
        found.append((f"{process.name}.inputs", process.inputs))
        found.extend((f"{process.name}.{s.id}.output", s.output) for s in process.steps if s.output)
    return found


@pytest.mark.parametrize("seed", range(12))
def test_every_sample_field_gets_a_value_the_engine_accepts(seed: int) -> None:
    rng = random.Random(seed)
    problems = {
        where: [str(i) for i in check_values(fields, values_for(fields, rng, NOW, people=PEOPLE), "x")]
        for where, fields in sample_fields()
    }
    assert {where: issues for where, issues in problems.items() if issues} == {}


def test_one_of_is_honoured_for_scalars_and_list_items() -> None:
    rng = random.Random(3)
    terms = field("paymentTermsDays", {"type": "number", "one_of": [15, 30, 45, 60]})
    actions = field("actions", {"type": "list", "items": {"type": "string", "one_of": ["restore", "lift"]}})
    assert {value_for(terms, rng) for _ in range(40)} == {15, 30, 45, 60}
    assert {a for _ in range(20) for a in value_for(actions, rng)} == {"restore", "lift"}


def test_person_values_come_from_the_people_given() -> None:
    rng = random.Random(1)
    adjuster = field("adjuster", "person")
    assert {value_for(adjuster, rng, people=PEOPLE) for _ in range(30)} == set(PEOPLE)


def test_object_keys_are_read_from_the_description() -> None:
    assert object_keys("One object per flagged account, with user, reason and lastLogin") == [
        "user",
        "reason",
        "lastLogin",
    ]
    assert object_keys("Where to send the laptop, with street, city, postalCode and country") == [
        "street",
        "city",
        "postalCode",
        "country",
    ]
    assert object_keys("One entry per item, each with description, quantity and unitPrice") == [
        "description",
        "quantity",
        "unitPrice",
    ]
    assert object_keys("Open findings") == []


def test_an_object_field_fills_the_keys_its_description_names() -> None:
    rng = random.Random(2)
    items = field(
        "lineItems",
        {
            "type": "list",
            "description": "One entry per item, each with description, quantity and unitPrice",
            "items": "object",
        },
    )
    for entry in value_for(items, rng, NOW):
        assert list(entry) == ["description", "quantity", "unitPrice"]
        assert isinstance(entry["description"], str)
        assert isinstance(entry["quantity"], int) and 1 <= entry["quantity"] <= 40
        assert isinstance(entry["unitPrice"], float) and 150 <= entry["unitPrice"] <= 25000
    plain = field("shippingAddress", "object")
    assert sorted(value_for(plain, rng, NOW)) == ["note", "reference"]


def test_names_steer_values() -> None:
    rng = random.Random(5)
    assert value_for(field("vendorName", "string"), rng) in {
        "Acme Industrial",
        "Northwind Traders",
        "Globex Supplies",
        "Initech Services",
        "Umbrella Logistics",
    }
    assert value_for(field("totalAccounts", "number"), rng) in range(1, 41)
    assert 150 <= value_for(field("requestedAmount", "number"), rng) <= 25000
    assert value_for(field("quoteUrl", "string"), rng).startswith("https://intranet.example.com/docs/")
    assert value_for(field("version", "string"), rng).startswith("v")
    assert value_for(field("refundedAt", "datetime"), rng, NOW) == "2026-10-06T09:00:00Z", (
        "a time is when the thing happened: now, so times in a run never run backwards"
    )
    due = value_for(field("neededBy", "date"), rng, NOW)
    assert "2026-10-07" <= due <= "2026-11-05", "a day ahead"


def test_each_field_has_one_meaning_and_its_generator() -> None:
    meanings = {
        name: meaning(field(name, kind))
        for name, kind in (
            ("requestedAmount", "number"),
            ("signOnBonus", "number"),
            ("priorStrikes", "number"),
            ("canaryErrorPct", "number"),
            ("compaRatio", "number"),
            ("orderId", "string"),
            ("ticketUrl", "string"),
            ("customerEmail", "string"),
            ("vendorName", "string"),
            ("policyClause", "string"),
            ("decisionSummary", "string"),
            ("authorHandle", "string"),
            ("adjuster", "person"),
            ("lossDate", "date"),
        )
    }
    assert meanings == {
        "requestedAmount": "money",
        "signOnBonus": "money",
        "priorStrikes": "count",
        "canaryErrorPct": "error-rate",
        "compaRatio": "ratio",
        "orderId": "id",
        "ticketUrl": "url",
        "customerEmail": "email",
        "vendorName": "name:vendor",
        "policyClause": "text",
        "decisionSummary": "text",
        "authorHandle": "handle",
        "adjuster": "person",
        "lossDate": "date",
    }
    rng = random.Random(4)
    clause = value_for(field("policyClause", "string"), rng)
    assert "Impersonation" not in clause and clause.endswith("."), "a clause is prose, not a policy label"


def test_optional_fields_follow_the_share_given() -> None:
    fields = (field("a", "string"), field("b", {"type": "string", "optional": True}))
    rng = random.Random(0)
    assert [sorted(values_for(fields, rng, include_optional=0.0)) for _ in range(3)] == [["a"]] * 3
    assert [sorted(values_for(fields, rng, include_optional=1.0)) for _ in range(3)] == [["a", "b"]] * 3
