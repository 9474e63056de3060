"""Run data cut to `checkStateBytes`: whole steps, oldest `at` first (check profile §5)."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.evaluator.verdict import json_size, truncate_run_data


def entry(at: str | None, summary: str) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": summary, "by": "a_screener", "history": []}
    if at is not None:
        out["at"] = at
    return out


DATA: dict[str, Any] = {
    "inputs": {"vendorName": "Acme"},
    "steps": {
        "intake": entry("2026-10-06T09:02:00Z", "b" * 100),
        "screen": entry("2026-10-06T09:01:00Z", "a" * 100),
        "review": entry("2026-10-06T09:03:00Z", "c" * 100),
    },
}


def test_data_that_fits_is_returned_as_is() -> None:
    assert truncate_run_data(DATA, json_size(DATA)) == (DATA, False)


def test_steps_go_oldest_at_first_not_in_written_order() -> None:
    original = copy.deepcopy(DATA)
    cut, truncated = truncate_run_data(DATA, json_size(DATA) - 1)
    assert truncated is True
    assert cut == {
        "inputs": {"vendorName": "Acme"},
        "steps": {"intake": DATA["steps"]["intake"], "review": DATA["steps"]["review"]},
    }
    assert original == DATA


def test_as_many_steps_go_as_needed_and_no_more() -> None:
    only_newest = {"inputs": DATA["inputs"], "steps": {"review": DATA["steps"]["review"]}}
    cut, truncated = truncate_run_data(DATA, json_size(only_newest))
    assert (cut, truncated) == (only_newest, True)
    cut, _ = truncate_run_data(DATA, json_size(only_newest) - 1)
    assert cut == {"inputs": DATA["inputs"], "steps": {}}


def test_a_step_without_at_counts_as_the_oldest() -> None:
    data = {"inputs": {}, "steps": {"a": entry("2026-10-06T09:00:00Z", "x" * 50), "b": entry(None, "y" * 50)}}
    cut, _ = truncate_run_data(data, json_size(data) - 1)
    assert list(cut["steps"]) == ["a"]


def test_at_is_compared_as_a_time_not_as_text() -> None:
    data = {
        "inputs": {},
        "steps": {
            "late": entry("2026-10-06T09:00:00.5Z", "x" * 50),
            "early": entry("2026-10-06T09:00:00Z", "y" * 50),
        },
    }
    cut, _ = truncate_run_data(data, json_size(data) - 1)
    assert list(cut["steps"]) == ["late"]


def test_inputs_go_last_when_nothing_else_is_left() -> None:
    data = {"inputs": {"notes": "z" * 500}, "steps": {"a": entry("2026-10-06T09:00:00Z", "x")}}
    assert truncate_run_data(data, 100) == ({"inputs": {}, "steps": {}}, True)


STAMPS = st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1)).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
)
EMPTY = json_size({"inputs": {}, "steps": {}})
"""The floor: run data with nothing in it. No real `checkStateBytes` is this small."""
STEPS = st.dictionaries(
    st.text("abcdefgh_", min_size=1, max_size=8),
    st.tuples(STAMPS, st.text(max_size=60)).map(lambda t: entry(t[0], t[1])),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(
    steps=STEPS,
    inputs=st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=3),
    limit=st.integers(EMPTY, 2000),
)
def test_the_cut_fits_drops_the_oldest_and_no_more_than_needed(
    steps: dict[str, Any], inputs: dict[str, Any], limit: int
) -> None:
    data = {"inputs": inputs, "steps": steps}
    cut, truncated = truncate_run_data(data, limit)
    assert truncated == (json_size(data) > limit)
    if not truncated:
        assert cut is data
        return
    kept = cut["steps"]
    assert list(kept) == [sid for sid in steps if sid in kept]
    dropped = [sid for sid in steps if sid not in kept]
    assert all(steps[d]["at"] <= steps[k]["at"] for d in dropped for k in kept)
    if cut["inputs"] == inputs:
        assert json_size(cut) <= limit
        newest_dropped = max(dropped, key=lambda sid: (steps[sid]["at"], list(steps).index(sid)))
        restored = {sid: steps[sid] for sid in steps if sid in kept or sid == newest_dropped}
        assert json_size({"inputs": inputs, "steps": restored}) > limit
    else:
        assert (cut["inputs"], kept) == ({}, {})
        assert json_size({"inputs": inputs, "steps": {}}) > limit
