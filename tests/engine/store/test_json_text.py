"""The engine's JSON encoders (`records.compact`, `records.counted`, `records.canonical`) give the text
`json.dumps` gives with the same options, and refuse what it refuses; the stored text (`compact`, from
pydantic-core) differs only in how it writes a float's exponent, and reads back the same."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.store.records import canonical, compact, compact_bytes, counted
from engine.store.state import data_bytes

VALUES: list[Any] = [
    None,
    'ü\n"\\ \u2028',
    1.5,
    -0.0,
    1e300,
    10**30,
    [],
    {},
    {"b": [1, 2.5, None, True, False, "x"], "a": {"z": {"y": []}}, "1": 2},
]


@pytest.mark.parametrize("value", VALUES)
def test_the_text_is_json_dumps_text(value: Any) -> None:
    options: dict[str, Any] = {"separators": (",", ":"), "ensure_ascii": False, "allow_nan": False}
    assert compact(value) == json.dumps(value, **options)
    assert compact_bytes(value) == json.dumps(value, **options).encode()
    assert counted(value) == json.dumps(value, **options)
    assert canonical(value) == json.dumps(value, sort_keys=True, **options)


@pytest.mark.parametrize(
    ("value", "error"),
    [(float("nan"), ValueError), ({"a": float("inf")}, ValueError), ({"a": object()}, TypeError)],
)
def test_what_json_cannot_carry_is_refused(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        compact(value)
    with pytest.raises(error):
        compact_bytes(value)
    with pytest.raises(error):
        counted(value)
    with pytest.raises(error):
        canonical(value)


def test_text_that_names_nan_or_infinity_is_stored_as_json_writes_it() -> None:
    value = {"note": "NaN and -Infinity", "n": [1.5]}
    assert compact(value) == '{"note":"NaN and -Infinity","n":[1.5]}'
    assert compact_bytes(value) == b'{"note":"NaN and -Infinity","n":[1.5]}'


def test_a_lone_surrogate_is_written_as_json_writes_it() -> None:
    assert compact({"a": "\ud800"}) == '{"a":"\ud800"}'
    with pytest.raises(UnicodeEncodeError):  # no UTF-8 text holds one
        compact_bytes({"a": "\ud800"})


def test_a_value_nested_deeper_than_pydantic_core_goes_is_written_as_json_writes_it() -> None:
    deep: list[Any] = []
    for _ in range(600):
        deep = [deep]
    assert compact(deep) == "[" * 600 + "[]" + "]" * 600
    assert compact_bytes(deep) == b"[" * 600 + b"[]" + b"]" * 600


@pytest.mark.parametrize(
    ("value", "stored", "as_json"), [(1e-05, "0.00001", "1e-05"), (-2.5e-7, "-2.5e-7", "-2.5e-07")]
)
def test_a_small_float_is_stored_in_its_own_spelling_and_counted_as_json_writes_it(
    value: float, stored: str, as_json: str
) -> None:
    assert compact([value]) == f"[{stored}]"
    assert json.loads(compact([value])) == [value]
    assert counted([value]) == f"[{as_json}]"
    assert data_bytes([value]) == len(as_json) + 2


def test_keys_that_do_not_sort_have_no_canonical_text() -> None:
    assert compact({1: 2, "a": 3}) == '{"1":2,"a":3}'
    with pytest.raises(TypeError):
        canonical({1: 2, "a": 3})
