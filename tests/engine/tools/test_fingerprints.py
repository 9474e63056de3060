"""A write's fingerprint: two calls share one exactly when RFC 8785 writes their arguments as one text,
each omitted argument read as its default."""

from __future__ import annotations

import json
from typing import Any

import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from engine.tools.fingerprints import DEFAULTS, EXACT, legacy, of

numbers = st.integers(1 - EXACT, EXACT - 1) | st.floats(-EXACT, EXACT, allow_nan=False)
"""Where RFC 8785's text reads back as the number written: beyond, an integer's text names the double
nearest it, which the engine does not round to (`test_numbers_compare_as_doubles...`)."""
values = st.recursive(
    st.none() | st.booleans() | numbers | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)


def digest(output: Any) -> str:
    made = of("submit", {"token": "t", "output": output, "summary": "s", "requestId": "r"})
    assert made is not None
    return made.digest


@given(values)
def test_a_value_and_its_rfc8785_reading_share_a_fingerprint(value: Any) -> None:
    assert digest(json.loads(rfc8785.dumps(value))) == digest(value)


@given(values, values)
def test_two_values_share_a_fingerprint_exactly_when_rfc8785_writes_them_alike(
    first: Any, second: Any
) -> None:
    assert (digest(first) == digest(second)) == (rfc8785.dumps(first) == rfc8785.dumps(second))


def test_numbers_compare_as_doubles_and_integers_no_double_holds_stay_apart() -> None:
    assert digest([1, -0.0, 2**53, 2**60, 1e20]) == digest([1.0, 0, float(2**53), 2.0**60, 10**20])
    assert digest(1) != digest(1.5)
    assert digest(2**60 + 1) != digest(2**60)
    assert digest(10**400) != digest(10**400 + 1)
    assert digest(True) != digest(1)


def test_an_omitted_argument_is_its_default_written_out() -> None:
    assert {tool: written for tool, written in DEFAULTS.items() if written} == {
        "start_run": {"mode": "live"},
        "get_work": {"limit": 20},
        "list_runs": {"limit": 20},
    }
    omitted = of("start_run", {"process": "p", "inputs": {}, "requestId": "r"})
    written = of("start_run", {"process": "p", "inputs": {}, "mode": "live", "requestId": "r2"})
    test = of("start_run", {"process": "p", "inputs": {}, "mode": "test", "requestId": "r"})
    assert omitted is not None and written is not None and test is not None
    assert omitted.digest == written.digest != test.digest


def test_a_record_of_before_matches_the_arguments_it_was_written_for() -> None:
    arguments = {"process": "p", "inputs": {"n": 1.0}, "requestId": "r"}
    made = of("start_run", arguments)
    assert made is not None
    before = legacy("start_run", arguments)
    assert before != made.digest
    assert made.matches(before) and made.matches(made.digest)
    assert not made.matches(legacy("start_run", {**arguments, "inputs": {"n": 1}}))
