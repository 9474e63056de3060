"""Expectations: JSON values compared as JSON, times near each other, failures worded for the report."""

from __future__ import annotations

import pytest

from conform.expect import CheckFailed, equal, equal_time, near, same


def test_expectations_compare_json_values_and_word_the_failure() -> None:
    assert (
        same({"a": [1, 2.0]}, {"a": [1.0, 2]}) and not same(True, 1) and not same({"a": 1}, {"a": 1, "b": 2})
    )
    with pytest.raises(CheckFailed) as raised:
        equal("run state", "active", "ended")
    assert str(raised.value) == 'run state: expected "ended", got "active"'
    equal_time("due", "2026-10-06T09:00:01Z", "2026-10-06T09:00:00Z")
    about = near("2026-10-06T09:00:00Z")
    assert same({"due": "2026-10-06T09:00:01Z", "at": ["x"]}, {"due": about, "at": ("x",)})
    assert not same(["2026-10-06T09:00:02Z"], [about]) and not same("soon", about)
    with pytest.raises(CheckFailed) as raised:
        equal("step", {"due": "2026-10-06T10:00:00Z"}, {"due": about})
    assert (
        str(raised.value)
        == 'step: expected {"due": "about 2026-10-06T09:00:00Z"}, got {"due": "2026-10-06T10:00:00Z"}'
    )
    with pytest.raises(CheckFailed):
        equal_time("due", "2026-10-06T09:00:02Z", "2026-10-06T09:00:00Z")
