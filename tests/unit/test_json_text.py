"""The engine's JSON encoders (`records.compact`, `records.canonical`), made once, give exactly the text
`json.dumps` gives with the same options, and refuse what it refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.store.records import canonical, compact

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
    assert canonical(value) == json.dumps(value, sort_keys=True, **options)


@pytest.mark.parametrize(
    ("value", "error"),
    [(float("nan"), ValueError), ({"a": float("inf")}, ValueError), ({"a": object()}, TypeError)],
)
def test_what_json_cannot_carry_is_refused(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        compact(value)
    with pytest.raises(error):
        canonical(value)


def test_keys_that_do_not_sort_have_no_canonical_text() -> None:
    assert compact({1: 2, "a": 3}) == '{"1":2,"a":3}'
    with pytest.raises(TypeError):
        canonical({1: 2, "a": 3})
