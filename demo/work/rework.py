"""A step worked again after an approver rejected it (its `on_reject`), read from the run data as a
careful worker would: the rejection's note says what to change, and only that changes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from console.client.wire import FieldSpec, FieldType
from demo.work.revise import named_fields
from demo.world.values import JsonObject
from engine.document.fields import parse_fields


@dataclass(frozen=True)
class Rework:
    """A step run again after an approver rejected it: the rejection's note, and what it asks to change.

    The fields the note names (by name or in words) are drawn anew; everything else the run's facts
    decide stays as the earlier attempt had it, so the history shows the change the note asked for.
    """

    note: str
    by: str
    before: JsonObject
    fresh: dict[str, str]

    @classmethod
    def read(
        cls, step_id: str, data: Mapping[str, Any], output: dict[str, FieldType | FieldSpec] | None
    ) -> Rework | None:
        """The rework this claim is, if an approval rejected the run after the step last completed.

        `data` is the run data (`RunData`), read as loosely as world/scene.py reads it; `output` the step's
        output requirements.
        """
        steps = data.get("steps") or {}
        record = steps.get(step_id) or {}
        attempts = [record] if "output" in record else []
        attempts += [h for h in reversed(record.get("history") or []) if isinstance(h.get("output"), dict)]
        if not attempts:
            return None
        last = attempts[0]
        rejections = [
            r
            for r in steps.values()
            if isinstance(r, dict)
            and r.get("decision") == "rejected"
            and r.get("note")
            and str(r.get("at") or "") >= str(last.get("at") or "")
        ]
        if not rejections:
            return None
        latest = max(rejections, key=lambda r: str(r.get("at") or ""))
        fields, _ = parse_fields(output or {}, "output")
        salt = f"rework {latest.get('at')}"
        named = {f.name: salt for f in named_fields(latest["note"], fields)}
        return cls(latest["note"], str(latest.get("by") or "an approver"), dict(last["output"]), named)

    def sentence(self, output: JsonObject) -> str:
        changed = [
            f"{name} from {_short_value(self.before.get(name))} to {_short_value(output.get(name))}"
            for name in self.fresh
            if self.before.get(name) != output.get(name)
        ]
        done = f"changed {', '.join(changed)}" if changed else "the figures it names check out unchanged"
        return f"Reworked after {self.by} rejected it: '{self.note}'; {done}."


def _short_value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"
