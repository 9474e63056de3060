"""Run data measured from step records serialised once (`engine.store.records`): the size is exactly
the compact UTF-8 size of the whole run data, and the snapshot changes exactly when the data does."""

from __future__ import annotations

import hashlib
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
    size = 4096 + 8  # {"a":"xxx…"}: 8 characters around the text
    memo = records._Memo(2 * size)
    monkeypatch.setattr(records, "_memo", memo)
    inputs = {"a": 1}
    large = [{"a": letter * 4096} for letter in "xyz"]
    records.measure(inputs, record=False)
    records.measure(large[0])
    assert memo.get(inputs) is None
    assert memo.get(large[0]) == (size, records.measure(large[0])[1])
    records.measure(large[1])
    records.measure(large[2])
    assert [memo.get(r) is not None for r in large] == [False, True, True]


FIELDS: list[dict[str, Any]] = [
    {},
    {
        "output": {"note": "ü" * 5000, "n": [1, 2.5, 1e-05, None, True]},
        "summary": "s",
        "by": "a_1",
        "at": "t",
    },
    {
        "output": {"b": {"y": 1, "x": [{"d": 0.1, "c": "€" * 5000}]}, "a": '\u2028\n"q"'},
        "next": "z",
        "reason": "",
    },
    {
        "output": ["é" * 5000],
        "evidence": [{"kind": "link", "ref": "https://x"}],
        "check": {"verdict": "pass"},
    },
    {"output": {"only": "o" * 5000}},
    {"output": {"small": 1}, "summary": "s" * 5000},
]


@pytest.mark.parametrize("fields", FIELDS)
def test_the_fields_text_and_the_record_made_of_them_are_the_canonical_texts(
    fields: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = records._Memo(records.TEXTS_BYTES)
    monkeypatch.setattr(records, "_texts", texts)
    memo = records._Memo(records.MEMO_BYTES)
    monkeypatch.setattr(records, "_memo", memo)
    assert records.text_of(fields) == records.canonical(fields).encode()
    assert len(records.text_of(fields)) == data_bytes(fields)  # what the run-data cap counts
    output = records.canonical(fields.get("output")).encode()
    kept = len(output) > records.KEEP_OVER
    assert texts.get(fields.get("output")) == (output if kept else None)
    record = {**fields, "history": [{"output": {"note": "earlier"}}]}
    text = records.canonical(record).encode()
    measured = (len(text), hashlib.sha256(text).digest())
    records.made(record)
    assert not texts  # kept for the write that makes the record, no longer
    assert memo.get(record) == (measured if kept else None)  # measured when made only from a kept text
    assert records.measure(record) == measured


def test_only_a_large_output_s_text_is_kept_and_a_record_is_measured_from_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = records._Memo(records.TEXTS_BYTES)
    monkeypatch.setattr(records, "_texts", texts)
    large, small = {"note": "x" * records.KEEP_OVER}, {"note": "x"}
    records.text_of({"output": large, "evidence": [large], "by": "a_1"})
    assert texts.get(large) == records.canonical(large).encode()
    records.text_of({"output": small, "by": "a_1", "summary": "x" * records.KEEP_OVER})
    assert texts.get(small) is None
    texts.put(large, 1, b'"as kept"')  # what a record made of `large` is measured from
    record = {"output": large, "by": "a_1", "history": []}
    text = b'{"by":"a_1","history":[],"output":"as kept"}'
    assert records.measure(record) == (len(text), hashlib.sha256(text).digest())


def test_keys_that_are_not_text_are_written_as_canonical_writes_them() -> None:
    assert records.text_of({2: "a", 1: 0}) == b'{"1":0,"2":"a"}'  # type: ignore[dict-item]
