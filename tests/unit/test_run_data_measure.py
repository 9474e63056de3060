"""Run data measured from step records serialised once (`engine.store.records`): the size is exactly
the compact UTF-8 size of the whole run data, and the snapshot changes exactly when the data does."""

from __future__ import annotations

from typing import Any

import pytest

from engine.store import records
from engine.store.state import Run, data_bytes, run_data_bytes, snapshot_of

LARGE: dict[str, Any] = {"output": {"note": "ü" * 5000, "n": [1, 2.5, None]}, "history": []}


def _run(data: dict[str, dict[str, Any]]) -> Run:
    run = Run("r_1", "p", 1, "live", "a_1", "2026-10-06T09:00:00.000000Z", None, {"tïcket": "T-1", "n": 3})
    run.data = data
    return run


def test_the_size_is_the_compact_size_of_the_whole_run_data() -> None:
    cases: list[dict[str, dict[str, Any]]] = [
        {},
        {"one": {"output": {}, "history": []}},
        {"one": LARGE, "twö": {"b": 1, "a": "€"}},
    ]
    for data in cases:
        run = _run(dict(data))
        assert run_data_bytes(run) == data_bytes(run.run_data())
        assert run_data_bytes(run) == data_bytes(run.run_data())  # again, from what was remembered


def test_the_snapshot_changes_with_the_data_and_only_with_it() -> None:
    first = snapshot_of(_run({"one": LARGE}))
    assert snapshot_of(_run({"one": LARGE})) == first
    assert snapshot_of(_run({"one": {**LARGE}})) == first  # an equal record, another object
    assert snapshot_of(_run({"one": {**LARGE, "history": [{"note": "x"}]}})) != first
    assert snapshot_of(_run({"two": LARGE})) != first
    other = _run({"one": LARGE})
    other.inputs = {"tïcket": "T-2", "n": 3}
    assert snapshot_of(other) != first


def test_records_are_remembered_within_a_bound_and_inputs_never(monkeypatch: pytest.MonkeyPatch) -> None:
    memo = records._Memo()
    monkeypatch.setattr(records, "_memo", memo)
    size = 4096 + 8  # {"a":"xxx…"}: 8 characters around the text
    monkeypatch.setattr(records, "MEMO_BYTES", 2 * size)
    inputs = {"a": 1}
    large = [{"a": letter * 4096} for letter in "xyz"]
    records.measure(inputs, record=False)
    records.measure(large[0])
    assert memo.get(inputs) is None
    assert memo.get(large[0]) == (size, records.measure(large[0])[1])
    records.measure(large[1])
    records.measure(large[2])
    assert [memo.get(r) is not None for r in large] == [False, True, True]
