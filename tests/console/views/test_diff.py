"""What changed between two versions of run data: between attempts of a step, or since a stale read."""

from __future__ import annotations

from console.client.wire import RunData, StepData
from console.views.diff import attempt_diffs, diff_values, run_data_changes


def test_diffs_name_each_changed_leaf() -> None:
    before = {"output": {"cleared": True, "note": "a"}, "summary": "x"}
    after = {"output": {"cleared": False, "extra": 1}, "summary": "x"}
    assert diff_values(before, after) == [
        "~ output.cleared: true → false",
        "- output.note: a",
        "+ output.extra: 1",
    ]


def test_attempts_are_compared_with_the_one_before() -> None:
    step: StepData = {
        "output": {"cleared": True},
        "evidence": [{"kind": "file", "ref": "f_2", "sha256": "b", "url": "http://x/2"}],
        "by": "a",
        "at": "t2",
        "history": [
            {
                "output": {"cleared": False},
                "evidence": [{"kind": "file", "ref": "f_1", "sha256": "a"}],
                "by": "a",
                "at": "t1",
            }
        ],
    }
    (first, first_changes), (current, changes) = attempt_diffs(step)
    assert first["at"] == "t1" and first_changes == []
    assert current["at"] == "t2"
    assert changes == ["~ output.cleared: false → true", "~ evidence: file f_1 → file f_2"]


def test_a_stale_read_ignores_new_signed_urls_and_empty_histories() -> None:
    before: RunData = {
        "inputs": {},
        "steps": {
            "a": {"evidence": [{"kind": "file", "ref": "f_1", "sha256": "a", "url": "u1"}], "history": []}
        },
    }
    after: RunData = {
        "inputs": {},
        "steps": {
            "a": {"evidence": [{"kind": "file", "ref": "f_1", "sha256": "a", "url": "u2"}], "history": []},
            "b": {"by": "x", "history": []},
        },
    }
    assert run_data_changes(before, after) == ["+ steps.b.by: x"]
