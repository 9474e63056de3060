"""The left half of the decision form: everything the decision is about, as readable lines.

Pure functions of the work item and the run as read: the test-run badge and the due time, the
escalation and the handoff (through `work_item_lines`), the run's inputs as a field table, then the
steps this step can see (those its instructions name first, then every other completed step, newest
first) with their outputs, summaries, evidence and verdicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from console.client.wire import PersonWorkEntry, RecordedEvidence, RunView, StepData
from console.views.format import counted, due, is_late, stamp
from console.views.palette import Palette
from console.views.render import BarOf, Line, record_lines, value_rows, work_item_lines


def quoted_steps(text: str, step_ids: list[str]) -> list[str]:
    """Step ids the instructions name (`steps.check_vendor...` or the bare id as a word), in that order."""
    found: list[tuple[int, str]] = []
    for step_id in step_ids:
        match = re.search(rf"(?<![\w-]){re.escape(step_id)}(?![\w-])", text)
        if match is not None:
            found.append((match.start(), step_id))
    return [step_id for _, step_id in sorted(found)]


@dataclass(frozen=True)
class Seen:
    step_id: str
    data: StepData
    quoted: bool


def visible_steps(entry: PersonWorkEntry, view: RunView) -> list[Seen]:
    """Quoted steps first (in the order named), then every other completed step, newest first."""
    own = entry["workItem"]["stepId"]
    steps = {k: v for k, v in view["data"]["steps"].items() if k != own}
    quoted = [s for s in quoted_steps(entry["workItem"]["text"], list(steps)) if s in steps]
    done = [k for k, v in steps.items() if k not in quoted and (v.get("at") or v["history"])]
    done.sort(key=lambda k: str(steps[k].get("at") or max(h.get("at") or "" for h in steps[k]["history"])))
    return [Seen(k, steps[k], True) for k in quoted] + [Seen(k, steps[k], False) for k in reversed(done)]


def evidence_of(entry: PersonWorkEntry, view: RunView | None) -> list[tuple[str, RecordedEvidence]]:
    """Every evidence item shown on the left, labelled by the step it belongs to, for the viewer."""
    found: list[tuple[str, RecordedEvidence]] = []
    escalation = entry["workItem"]["escalation"]
    candidate = escalation.get("candidate") if escalation is not None else None
    for item in (candidate or {}).get("evidence") or ():
        found.append((f"held candidate · {item['kind']} {item['ref']}", item))
    if view is not None:
        for seen in visible_steps(entry, view):
            for item in seen.data.get("evidence") or ():
                found.append((f"{seen.step_id} · {item['kind']} {item['ref']}", item))
    return found


def input_table(inputs: dict[str, object], palette: Palette) -> list[Line]:
    """Inputs as `name  value` rows, names aligned (objects and lists of objects as `value_rows`)."""
    if not inputs:
        return [("  (no inputs)", palette.muted)]
    width = min(max(len(name) for name in inputs), 24)
    return [
        (row, "") for name, value in inputs.items() for row in value_rows(name, value, f"  {name:<{width}}  ")
    ]


def context_lines(
    entry: PersonWorkEntry,
    view: RunView | None,
    now: datetime,
    palette: Palette,
    bar: BarOf | None = None,
) -> list[Line]:
    item = entry["workItem"]
    lines: list[Line] = []
    if entry["mode"] == "test":
        lines.append(("TEST RUN: nothing it does reaches the real world", palette.test))
    if item["due"] is not None:
        late = is_late(now, item["due"])
        when = due(now, item["due"], palette.warning).plain
        lines.append(
            (
                f"due {stamp(item['due'])} · {'OVERDUE, ' if late else ''}{when}",
                palette.warning if late else palette.muted,
            )
        )
    lines.append((f"{item['kind']} · step {item['stepId']} · run {entry['runId']}", "bold"))
    lines += work_item_lines(item, palette, bar)
    lines.append(("", ""))
    if view is None:
        lines.append(("reading the run…", palette.muted))
        return lines
    lines.append(("inputs", "bold"))
    lines += input_table(dict(view["data"]["inputs"]), palette)
    seen = visible_steps(entry, view)
    lines.append(("", ""))
    lines.append(("steps this step can see" if seen else "no earlier step has completed", "bold"))
    for step in seen:
        mark = " · named in the instructions" if step.quoted else ""
        lines.append((f"{step.step_id}{mark}", palette.accent))
        if step.data.get("at") or step.data.get("by"):
            lines += record_lines(step.data, palette, "  ", bar)
        else:
            lines.append(("  no current completion", palette.muted))
        if step.data["history"]:
            attempts = counted(len(step.data["history"]), "earlier attempt")
            lines.append((f"  {attempts} in the run's detail", palette.muted))
    return lines
