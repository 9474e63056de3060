"""The relations file's expression language: what it reads, what it refuses, how missing values behave."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from demo.world.expr import Expr, ExprError, Resolver, lookup, placeholders, render

NOW = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)
DATA: dict[str, Any] = {
    "now": NOW,
    "inputs": {"requestedAmount": 480.0, "reason": "damaged", "startDate": "2026-11-02"},
    "steps": {
        "locate_data": {
            "output": {
                "recordsFound": [
                    {"system": "crm", "recordCount": 3},
                    {"system": "billing", "recordCount": 12},
                ]
            }
        }
    },
    "orderTotal": 612.5,
    "eligible": True,
}


class Data(Resolver):
    def path(self, parts: tuple[str, ...]) -> Any:
        return NOW if parts == ("now",) else lookup(DATA, parts)

    def call(self, name: str, args: list[Any]) -> Any:
        return f"{name}{tuple(args)}"


def ev(text: str) -> Any:
    return Expr.parse(text).evaluate(Data())


def test_paths_arithmetic_and_functions() -> None:
    assert ev("min(inputs.requestedAmount, orderTotal)") == 480.0
    assert ev("round(orderTotal * 1.1, 2)") == 673.75
    assert ev("sum(steps.locate_data.output.recordsFound.recordCount)") == 15
    assert ev("steps.locate_data.output.recordsFound.system") == ["crm", "billing"]
    assert ev("dot([2, 3], [1.5, 10])") == 33.0
    assert ev("'Eligible' if eligible else 'Not eligible'") == "Eligible"
    assert ev("inputs.reason in ('damaged', 'wrong_item') and not false") is True
    assert ev("'#' + 42 + ' ok'") == "#42 ok", "text beside a number joins as text"
    assert ev("['a'] + ['b']") == ["a", "b"]
    assert ev("policy('Refund policy')") == "policy('Refund policy',)", "scene functions go to the resolver"


def test_dates_and_times_read_from_wire_text() -> None:
    assert ev("inputs.startDate - days(1)") == date(2026, 11, 1)
    assert ev("date(now) + days(3)") == date(2026, 10, 9)
    assert ev("inputs.startDate > now") is True, "a day beside a time compares as that day's midnight"
    assert ev("year(now)") == 2026
    assert ev("previous_version('v2.14.0')") == "v2.13.0"
    assert ev("previous_version('v2.0.3')") == "v2.0.2"


def test_names_emails_and_money() -> None:
    assert ev("first_name('priya.shah@example.org')") == "Priya"
    assert ev("name_of('priya.shah@example.org')") == "Priya Shah"
    assert ev("email_of('Jordan Lee', 'example.com')") == "jordan.lee@example.com"
    assert ev("money(1234.5)") == "1,234.50"
    assert ev("join(['a', 'b'])") == "a, b"


def test_a_missing_value_is_none_and_a_condition_on_it_does_not_hold() -> None:
    assert ev("inputs.nothing") is None
    assert ev("inputs.nothing + 1") is None
    assert Expr.parse("inputs.nothing > 3").holds(Data()) is False
    assert Expr.parse("inputs.nothing <= 3").holds(Data()) is False
    assert ev("has(inputs.nothing)") is False
    assert ev("orderTotal / 0") is None, "a division by zero is no value, not a crash"
    assert ev("min(inputs.nothing, 3)") == 3, "min and max skip what is missing"


def test_what_the_language_does_not_offer_is_refused_by_name() -> None:
    refused = {
        "__import__('os')": "unknown function '__import__'",
        "open('x')": "unknown function 'open'",
        "inputs.x[0]": "Subscript is not allowed",
        "lambda: 1": "Lambda is not allowed",
        "(1).real": "only dotted names may be read",
        "{'a': 1}": "Dict is not allowed",
        "min(a, key=b)": "min() takes no keyword arguments",
        "1 +": "not an expression",
        "2 ** 8": "BinOp is not allowed",
    }
    for text, message in refused.items():
        with pytest.raises(ExprError, match=message.replace("(", r"\(").replace(")", r"\)")):
            Expr.parse(text)


def test_an_expression_names_what_it_reads() -> None:
    expr = Expr.parse("min(inputs.requestedAmount, orderTotal) if eligible else 0")
    assert expr.paths == (("eligible",), ("inputs", "requestedAmount"), ("orderTotal",))
    assert expr.names() == {"eligible", "orderTotal"}
    assert expr.inputs() == {"requestedAmount"}


def test_templates_fill_each_placeholder_and_keep_doubled_braces() -> None:
    text = render("Refund {money(orderTotal)} for {inputs.reason} {{ok}}", Data(), str)
    assert text == "Refund 612.50 for damaged {ok}"
    assert [e.text for e in placeholders("a {x} b {y + 1}")] == ["x", "y + 1"]
    with pytest.raises(ExprError, match="is never closed"):
        placeholders("a {x")
    with pytest.raises(ExprError, match="without its"):
        placeholders("a } b")
