"""Choosing a route by its `when` text, and output that agrees with the choice."""

from __future__ import annotations

import random
from collections import Counter

from demo.work.routes import (
    Choice,
    agreeing_routes,
    choose_route,
    conform,
    is_negative,
    routes_on_a_verdict,
)
from engine.document.fields import parse_fields

ROUTES = [
    {"to": "issue_refund", "when": "Eligible and 100 or less"},
    {"to": "lead_approval", "when": "Eligible and over 100"},
    {"to": "send_decline", "when": "Not eligible under the policy"},
]


def test_negative_wording_marks_the_unhappy_route() -> None:
    assert [is_negative(r["when"]) for r in ROUTES] == [False, False, True]
    assert is_negative("Tag missing or CI failed") is True
    assert is_negative("Budget covers it, vendor active, totals match") is False
    assert is_negative(None) is False


def test_the_happy_routes_are_three_times_as_likely_and_every_route_is_taken() -> None:
    rng = random.Random(11)
    counts = Counter(choose_route(ROUTES, rng).to for _ in range(7000))
    assert set(counts) == {"issue_refund", "lead_approval", "send_decline"}
    assert 2.6 < counts["issue_refund"] / counts["send_decline"] < 3.4
    assert 2.6 < counts["lead_approval"] / counts["send_decline"] < 3.4


def test_the_choice_is_seeded_and_gives_its_reason() -> None:
    first = [choose_route(ROUTES, random.Random(4)) for _ in range(3)]
    assert first == [first[0]] * 3
    assert choose_route([{"to": "next_step"}], random.Random(0)) == Choice(
        "next_step", None, "Chose next_step."
    )
    chosen = choose_route(ROUTES[2:], random.Random(0))
    assert chosen == Choice(
        "send_decline", "Not eligible under the policy", "Chose send_decline: Not eligible under the policy."
    )


def test_booleans_named_in_when_take_its_polarity() -> None:
    fields, _ = parse_fields({"eligible": "boolean", "ciPassed": "boolean", "other": "boolean"}, "output")
    output = {"eligible": True, "ciPassed": True, "other": True}
    rng = random.Random(0)
    assert conform(output, fields, "Not eligible under the policy", rng) == {
        "eligible": False,
        "ciPassed": True,
        "other": True,
    }
    assert conform(output, fields, "Tag missing or CI failed", rng) == {
        "eligible": True,
        "ciPassed": False,
        "other": True,
    }
    assert conform({"ciPassed": False}, fields, "Tag exists and CI passed", rng) == {"ciPassed": True}


def test_one_of_values_named_in_when_are_kept_to_those() -> None:
    fields, _ = parse_fields(
        {"finalDecision": {"type": "string", "one_of": ["uphold", "overturn", "partial"]}}, "output"
    )
    rng = random.Random(0)
    assert conform({"finalDecision": "overturn"}, fields, "Uphold the original action", rng) == {
        "finalDecision": "uphold"
    }
    scope, _ = parse_fields({"scope": {"type": "string", "one_of": ["full", "partial", "refuse"]}}, "output")
    assert conform({"scope": "refuse"}, scope, "Delete all or part of the data", rng) == {"scope": "partial"}
    assert conform({"scope": "full"}, scope, "Nothing can be deleted", rng) == {"scope": "full"}


def test_amounts_get_the_bound_when_puts_on_them() -> None:
    fields, _ = parse_fields({"approvedAmount": "number", "orderTotal": "number"}, "output")
    rng = random.Random(9)
    low = conform({"approvedAmount": 840.0, "orderTotal": 900.0}, fields, "Eligible and 100 or less", rng)
    assert 10 <= low["approvedAmount"] <= 100 and low["orderTotal"] == 900.0
    high = conform({"approvedAmount": 40.0, "orderTotal": 900.0}, fields, "Eligible and over 100", rng)
    assert 101 <= high["approvedAmount"] <= 2000 and high["orderTotal"] == 900.0
    assert conform({"approvedAmount": 55.5}, fields, "Eligible and 100 or less", rng) == {
        "approvedAmount": 55.5
    }
    assert conform({"approvedAmount": 55.5}, fields, None, rng) == {"approvedAmount": 55.5}


def test_a_misjudged_choice_takes_an_unhappy_route_when_there_is_one() -> None:
    rng = random.Random(2)
    assert {choose_route(ROUTES, rng, unhappy=True).to for _ in range(20)} == {"send_decline"}
    both = [{"to": "reviews", "when": "Tag exists and CI passed"}, {"to": "blocked", "when": "CI failed"}]
    assert choose_route(both, rng, unhappy=True) == Choice(
        "blocked", "CI failed", "Chose blocked: CI failed."
    )
    happy = [{"to": "a", "when": "Canary is healthy"}, {"to": "b"}]
    assert {choose_route(happy, rng, unhappy=True).to for _ in range(40)} == {"a", "b"}


def test_routes_on_a_verdict_name_a_boolean_of_the_output() -> None:
    fields, _ = parse_fields({"eligible": "boolean", "approvedAmount": "number"}, "output")
    assert routes_on_a_verdict(ROUTES, fields) is True
    assert routes_on_a_verdict([{"to": "a", "when": "Amount over 100"}, {"to": "b"}], fields) is False
    flagged, _ = parse_fields({"eligible": {"type": "boolean", "one_of": [True]}}, "output")
    assert routes_on_a_verdict(ROUTES, flagged) is False


def test_agreeing_routes_follow_every_boolean_their_when_names() -> None:
    fields, _ = parse_fields({"eligible": "boolean", "ciPassed": "boolean"}, "output")
    assert [r["to"] for r in agreeing_routes(ROUTES, {"eligible": True}, fields)] == [
        "issue_refund",
        "lead_approval",
    ]
    assert [r["to"] for r in agreeing_routes(ROUTES, {"eligible": False}, fields)] == ["send_decline"]
    assert [r["to"] for r in agreeing_routes(ROUTES, {"ciPassed": False}, fields)] == [
        "issue_refund",
        "lead_approval",
        "send_decline",
    ], "a route that names no boolean of the output agrees with any"
