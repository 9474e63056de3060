"""Wire shapes as readable lines: a work item, its handoff and escalation, a step's record, a verdict.

Pure functions from the server's JSON to (text, style) lines, shared by the work queue, the run detail
and the decision form, so a verdict or a handoff reads the same wherever it appears.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterator

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text

from console.client.wire import Handoff, StepData, StepRecord, Verdict, VerdictQuestion, WorkItem
from console.views.diff import RECORD_FIELDS, attempt_diffs
from console.views.format import assignee, counted, one_line, stamp, value_text
from console.views.palette import Palette

Line = tuple[str, str]
"""Text and a style (possibly empty)."""

BarOf = Callable[[VerdictQuestion], str]
"""A verdict question to the threshold it had to clear (console.views.verdict_bars); None shows no thresholds."""


def to_text(lines: list[Line]) -> Text:
    text = Text(end="")
    for i, (content, style) in enumerate(lines):
        if i:
            text.append("\n")
        text.append(content, style)
    return text


HANG = 2
"""Cells a wrapped line's continuation hangs under the line's own indent."""


class Hanging:
    """Lines wrapped to the pane, an indented line's continuation hanging under its own indent (plus
    `HANG`): a long nested value (a step's output, a summary) reads as one entry instead of running on at
    the left edge, where it would pass for a line of its own. Lines that start at the edge (prose) wrap as
    Rich wraps them. `str()` is the lines unwrapped."""

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines

    def __str__(self) -> str:
        return "\n".join(content for content, _ in self.lines)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        width = max(1, options.max_width)
        for content, style in self.lines:
            indent = len(content) - len(content.lstrip(" "))
            if not indent or cell_len(content) <= width or indent + HANG >= width // 2:
                yield Text(content, style)
                continue
            wrapped = textwrap.wrap(
                content,
                width,
                subsequent_indent=" " * (indent + HANG),
                break_on_hyphens=False,
                drop_whitespace=True,
            )
            for part in wrapped:
                yield Text(part, style)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((cell_len(content) for content, _ in self.lines), default=0)
        return Measurement(min(widest, 1), widest).clamp(max_width=options.max_width)


def check_lines(
    verdict: Verdict | None, palette: Palette, indent: str = "", bar: BarOf | None = None
) -> list[Line]:
    """A verdict: what it was, whether it could block, what answered, then every question answered."""
    if verdict is None:
        return []
    styles = {"pass": palette.success, "fail": palette.error, "unsure": palette.warning}
    blocking = "advisory" if verdict.get("advisory") else "blocking"
    truncated = " · run data truncated" if verdict.get("truncated") else ""
    lines: list[Line] = [
        (
            f"{indent}check: {verdict.get('verdict')} · {blocking} · model {verdict.get('model', '')}"
            f" · {stamp(verdict.get('at'))}{truncated}",
            styles.get(str(verdict.get("verdict")), palette.muted),
        )
    ]
    for question in verdict.get("questions") or ():
        confidence = question.get("confidence")
        shown = value_text(question.get("answer"), 60)
        shown += f" (confidence {confidence})" if confidence is not None else ""
        needs = f" · needs {bar(question)}" if bar is not None else ""
        lines.append(
            (
                f"{indent}  {question.get('result')} · {question.get('kind')}: {question.get('ask')} → {shown}"
                f"{needs}",
                styles.get(str(question.get("result")), ""),
            )
        )
    return lines


def handoff_lines(handoff: Handoff | None, palette: Palette, bar: BarOf | None = None) -> list[Line]:
    if not handoff:
        return []
    lines: list[Line] = [("handoff from the previous attempt", "bold")]
    if "progress" in handoff:
        lines.append((f"  progress: {handoff['progress']}", ""))
    returned = handoff.get("returned")
    if returned is not None:
        lines.append(
            (
                f"  returned by {returned.get('by')} at {stamp(returned.get('at'))}: {returned.get('note')}",
                palette.warning,
            )
        )
    for issue in handoff.get("issues") or ():
        lines.append((f"  issue: {issue}", palette.error))
    lines += check_lines(handoff.get("check"), palette, "  ", bar)
    return lines


def value_rows(name: str, value: object, lead: str) -> list[str]:
    """A named value as rows, after `lead` (the indent and the aligned name go in it): an object as
    `key: value · …`, a list of objects (line items, flagged accounts) as its count, then one numbered
    row per element; anything else as `value_text`."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        under = " " * len(lead)
        count = counted(len(value), "item")
        return [f"{lead}{count}"] + [f"{under}{n}. {pairs(item)}" for n, item in enumerate(value, 1)]
    return [f"{lead}{pairs(value) if isinstance(value, dict) and value else value_text(value, 2000)}"]


def pairs(value: dict[str, object]) -> str:
    return one_line(" · ".join(f"{key}: {value_text(item, 400)}" for key, item in value.items()), 2000)


def record_lines(
    record: StepRecord, palette: Palette, indent: str = "", bar: BarOf | None = None
) -> list[Line]:
    """One completion of a step: output, summary, route and reason, decision and note, evidence, check."""
    lines: list[Line] = []
    by = f"{record.get('by', '')} at {stamp(record.get('at'))}" if record.get("by") else ""
    decision = record.get("decision")
    if decision:
        style = palette.error if decision in ("rejected", "failed") else palette.success
        lines.append((f"{indent}{decision}" + (f" by {by}" if by else ""), style))
    elif by:
        lines.append((f"{indent}done by {by}", palette.muted))
    if record.get("note"):
        lines.append((f"{indent}note: {record.get('note')}", ""))
    output = record.get("output")
    if output:
        lines.append((f"{indent}output", palette.muted))
        lines += [
            (row, "")
            for name, value in output.items()
            for row in value_rows(name, value, f"{indent}  {name}: ")
        ]
    if record.get("summary"):
        lines.append((f"{indent}summary: {record.get('summary')}", ""))
    if record.get("next"):
        lines.append(
            (f"{indent}next: {record.get('next')} — reason: {record.get('reason', '')}", palette.accent)
        )
    for item in record.get("evidence") or ():
        sha = f" sha256 {str(item['sha256'])[:16]}…" if item.get("sha256") else ""
        lines.append((f"{indent}evidence {item.get('kind')}: {item.get('ref')}{sha}", ""))
    lines += check_lines(record.get("check"), palette, indent, bar)
    return lines


def step_data_lines(step_data: StepData | None, palette: Palette, bar: BarOf | None = None) -> list[Line]:
    """The current completion, then each earlier attempt with what changed against the one before."""
    if step_data is None:
        return [("not completed", palette.muted)]
    found = attempt_diffs(step_data)
    has_current = any(key in step_data for key in RECORD_FIELDS)
    lines: list[Line] = []
    for number in range(len(found), 0, -1):
        entry, changes = found[number - 1]
        title = "current" if has_current and number == len(found) else f"attempt {number} (history)"
        lines.append((title, "bold"))
        lines += record_lines(entry, palette, "  ", bar)
        if changes:
            lines.append(("  changed from the attempt before:", palette.muted))
            lines += [(f"    {change}", palette.accent) for change in changes]
    return lines or [("not completed", palette.muted)]


BLOCK_START = re.compile(r"([-*+]|\d+[.)])\s|[|#>]")
"""A line that starts its own block in Markdown: a list item, a table row, a heading, a quote."""
ONE_LINE_BLOCK = re.compile(r"[|#]")
"""A block that ends with its line: a heading, a table row."""


def reflowed(text: str) -> str:
    """Instructions without the line breaks of their source file: the lines of one paragraph are
    joined (Markdown's soft breaks), so the pane wraps them to its own width; blank lines, list items
    and indented lines stay where they are."""
    lines: list[str] = []
    for line in text.splitlines():
        stripped, before = line.strip(), lines[-1].strip() if lines else ""
        soft = before and stripped and not line[0].isspace()
        if soft and not BLOCK_START.match(stripped) and not ONE_LINE_BLOCK.match(before):
            lines[-1] += " " + stripped
        else:
            lines.append(line)
    return "\n".join(lines)


def work_item_lines(item: WorkItem, palette: Palette, bar: BarOf | None = None) -> list[Line]:
    """A work item as its assignee reads it before deciding: why it came to them first (the escalation
    note, or the questions an unsure check left open), then the instructions."""
    lines: list[Line] = []
    escalation = item.get("escalation")
    if escalation is not None:
        if escalation.get("check") is not None:
            lines.append(("escalated by an unsure check: the submission is held for you to decide", "bold"))
        lines.append(
            (
                f"escalated by {escalation.get('by')} at {stamp(escalation.get('at'))}: {escalation.get('note')}",
                palette.warning,
            )
        )
        lines += check_lines(escalation.get("check"), palette, "  ", bar)
    lines.append((reflowed(str(item.get("text", ""))), ""))
    lines.append(
        (
            f"assigned to {assignee(item.get('assignedTo'))} · due {stamp(item.get('due')) or '—'}",
            palette.muted,
        )
    )
    candidate = None if escalation is None else escalation.get("candidate")
    if candidate is not None:
        lines.append(("held candidate:", "bold"))
        lines += record_lines(candidate, palette, "  ", bar)
    lines += handoff_lines(item.get("handoff"), palette, bar)
    routes = item.get("next")
    if routes is not None:
        lines.append(("routes:", "bold"))
        lines += [(f"  → {r.get('to')}" + (f": {r['when']}" if r.get("when") else ""), "") for r in routes]
    decisions = item["decide"]["decisions"]
    lines.append((f"decisions: {', '.join(decisions)}", palette.muted))
    return lines
