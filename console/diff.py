"""What changed between two versions of run data: between attempts of a step, or since a stale read.

Pure functions over JSON values, so the lines a person reads before retrying a decision are tested
without a screen.
"""

from __future__ import annotations

from collections.abc import Mapping

from console.client.wire import Json, RunData, StepData, StepRecord
from console.format import value_text

RECORD_FIELDS = ("output", "evidence", "summary", "next", "reason", "decision", "note", "check", "by", "at")


def _flatten(value: object, prefix: str) -> dict[str, object]:
    if isinstance(value, Mapping):
        flat: dict[str, object] = {}
        for key, inner in value.items():
            flat.update(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


def diff_values(before: object, after: object, prefix: str = "") -> list[str]:
    """One line per leaf that differs: `~ path: old → new`, `+ path: new`, `- path: old`."""
    old, new = _flatten(before, prefix), _flatten(after, prefix)
    lines: list[str] = []
    for path in [*old, *(p for p in new if p not in old)]:
        if path not in new:
            lines.append(f"- {path}: {value_text(old[path], 120)}")
        elif path not in old:
            lines.append(f"+ {path}: {value_text(new[path], 120)}")
        elif old[path] != new[path]:
            lines.append(f"~ {path}: {value_text(old[path], 60)} → {value_text(new[path], 60)}")
    return lines


def _comparable(value: object) -> Json:
    """Run data without what changes on every read or says nothing: signed file URLs, empty histories."""
    if isinstance(value, Mapping):
        return {
            str(k): _comparable(v)
            for k, v in value.items()
            if not (k == "url" and "ref" in value) and not (k == "history" and v == [])
        }
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value if isinstance(value, str | int | float | bool) else None


def _record(entry: StepRecord) -> dict[str, object]:
    record = {
        key: entry.get(key) for key in RECORD_FIELDS if key in entry and key not in ("by", "at", "evidence")
    }
    if "evidence" in entry:
        record["evidence"] = ", ".join(f"{e.get('kind')} {e.get('ref')}" for e in entry["evidence"])
    return record


def attempts(step_data: StepData) -> list[StepRecord]:
    """Every completion of a step, oldest first: its history, then the current one if it has one.

    The current completion is the step's record itself (its `history` aside).
    """
    done = list(step_data["history"])
    return [*done, step_data] if any(key in step_data for key in RECORD_FIELDS) else done


def attempt_diffs(step_data: StepData) -> list[tuple[StepRecord, list[str]]]:
    """Each attempt with the lines that differ from the attempt before it (none for the first)."""
    found = attempts(step_data)
    return [
        (entry, diff_values(_record(found[i - 1]), _record(entry)) if i else [])
        for i, entry in enumerate(found)
    ]


def run_data_changes(before: RunData | None, after: RunData) -> list[str]:
    """What a stale decision missed: the run data leaves that changed since the form was opened."""
    return diff_values(_comparable(before or {}), _comparable(after))
