"""What changed between two versions of run data: between attempts of a step, or since a stale read.

Pure functions over JSON values, so the lines a person reads before retrying a decision are tested
without a screen.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from console.client.wire import Json, RunData, StepData, StepRecord
from console.views.format import value_text

LONG = 60
"""Strings longer than this are compared word by word, so the change shows, not a cut-off prefix."""
CONTEXT_WORDS = 4
"""Unchanged words kept on each side of a change in a word diff."""

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
            before, after = old[path], new[path]
            if isinstance(before, str) and isinstance(after, str) and max(len(before), len(after)) > LONG:
                lines.append(f"~ {path}: {word_diff(before, after)}")
            else:
                lines.append(f"~ {path}: {value_text(before, LONG)} → {value_text(after, LONG)}")
    return lines


def word_diff(before: str, after: str) -> str:
    """The change between two texts word by word: `[-removed-]` and `{+added+}` in place, with a few
    unchanged words around each change and `…` for the unchanged stretches left out."""
    old, new = before.split(), after.split()
    parts: list[str] = []
    opcodes = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    for i, (tag, a1, a2, b1, b2) in enumerate(opcodes):
        if tag == "equal":
            same = old[a1:a2]
            first, last = i == 0, i == len(opcodes) - 1
            keep_head = 0 if first else CONTEXT_WORDS
            keep_tail = 0 if last else CONTEXT_WORDS
            if len(same) > keep_head + keep_tail:
                head, tail = same[:keep_head], same[len(same) - keep_tail :] if keep_tail else []
                parts += [*head, "…", *tail]
            else:
                parts += same
            continue
        if a2 > a1:
            parts.append("[-" + " ".join(old[a1:a2]) + "-]")
        if b2 > b1:
            parts.append("{+" + " ".join(new[b1:b2]) + "+}")
    return " ".join(parts)


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
