"""A run's story as timeline entries: from the server's run log (`apc_run_log`) when it offers one,
else pieced together from `get_run` alone (step records and their history, escalations, handoffs,
the end), which any conforming server answers.

Pure functions from wire JSON, so what an operator reads is tested without a screen. Every note,
summary and issue is kept in full; only the screen wraps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from console.client.run_log import RunLog, RunLogEntry
from console.client.wire import RunView, StepRecord
from console.views.format import stamp, value_text
from console.views.palette import Palette
from console.views.render import Line


@dataclass(frozen=True)
class Entry:
    at: str | None
    who: str | None
    what: str
    step: str | None = None
    lines: list[str] = field(default_factory=list)
    """The note, summary, issues or facts, each in full."""
    tone: str = ""
    """`good`, `bad`, `warn` or empty: how the entry is coloured."""
    count: int = 1


@dataclass(frozen=True)
class Gap:
    """Entries the server's per-run cap dropped."""

    dropped: int


Item = Entry | Gap

SERVER = "server"


def _at(value: object) -> str | None:
    return value if isinstance(value, str) else None


def from_log(log: RunLog) -> list[Item]:
    """The run log's entries, oldest first, with a `Gap` where the server dropped some."""
    out: list[Item] = []
    previous = 0
    for entry in log["entries"]:
        if entry["seq"] > previous + 1:
            out.append(Gap(entry["seq"] - previous - 1))
        previous = entry["seq"]
        out.append(_logged(entry))
    return out


def _logged(e: RunLogEntry) -> Entry:
    d: dict[str, Any] = dict(e["detail"])
    kind, step = e["kind"], e["stepId"]
    note = [e["note"]] if e["note"] else []
    what, lines, tone = kind.replace("_", " "), list(note), ""
    if kind == "run_started":
        what = f"started the run ({d.get('mode', 'live')})"
        lines = [f"{k}: {value_text(v)}" for k, v in (d.get("inputs") or {}).items()]
    elif kind == "step_ready":
        to = d.get("assignedTo")
        who = to.get("person") or to.get("group") if isinstance(to, dict) else None
        what = f"{step} ready" + (f" for {who}" if who else "")
    elif kind in ("claimed", "renewed"):
        what = f"{kind} {step} · lease until {stamp(d.get('leaseUntil'))}"
        lines = [f"progress: {d['progress']}"] if d.get("progress") else []
    elif kind == "submission_refused":
        what, tone = f"submission of {step} refused", "bad"
        lines = [str(i) for i in d.get("issues") or []]
    elif kind == "submitted":
        what, tone = f"submitted {step}" + (f" → {d['next']}" if d.get("next") else ""), "good"
    elif kind == "escalated":
        what, tone = f"escalated {step}", "warn"
    elif kind == "returned":
        what, tone = f"returned {step}", "warn"
    elif kind == "decided":
        decision = str(d.get("decision"))
        what = f"{decision} {step}"
        tone = "bad" if decision in ("rejected", "failed") else "good"
    elif kind == "check_verdict":
        verdict = d.get("verdict") or {}
        what = f"check on {step}: {verdict.get('verdict')}"
        tone = {"pass": "good", "fail": "bad", "unsure": "warn"}.get(str(verdict.get("verdict")), "")
        lines = [
            f"{q.get('result')} · {q.get('ask')} → {value_text(q.get('answer'), 80)}"
            for q in verdict.get("questions") or []
        ]
    elif kind == "wait_started":
        if d.get("event"):
            timeout = f" (times out {stamp(d['timeout'])})" if d.get("timeout") else ""
            what = f"{step} waits for event {d['event']}{timeout}"
        else:
            what = f"{step} waits until {stamp(d.get('until'))}"
    elif kind == "wait_ended":
        what = f"{step} wait over" + (f": event {d['event']}" if d.get("event") else "")
    elif kind == "event_received":
        what = f"event {d.get('event')} " + ("held for a later wait" if d.get("held") else f"taken by {step}")
    elif kind == "overdue":
        what, tone = f"{step} overdue (due {stamp(d.get('due'))})", "warn"
    elif kind == "timed_out":
        tone = "warn"
        if d.get("timer") == "lease":
            what = f"lease on {step} ran out ({d.get('agent')})"
            lines = [f"progress handed on: {d['progress']}"] if d.get("progress") else []
        else:
            what = f"{step} timed out" + (f" → {d['next']}" if d.get("next") else "")
    elif kind == "rework":
        what, tone = f"rework: back to {d.get('to')}", "warn"
    elif kind == "cancelled":
        what, tone = "cancelled the run", "bad"
    elif kind == "ended":
        outcome = d.get("outcome")
        what, tone = f"run ended: {outcome}", "bad" if outcome in ("failed", "rejected") else "good"
    return Entry(e["at"], e["by"] or SERVER, what, step, lines, tone, e["count"])


def from_view(view: RunView) -> list[Item]:
    """What `get_run` alone tells: each step's completions (history included), open escalations and
    handoffs, and the end; ordered by time, the start first."""
    run = view["run"]
    out: list[Entry] = [Entry(run["startedAt"], run["startedBy"], "started the run")]
    for step_id, data in view["data"]["steps"].items():
        for record in [*data["history"], data]:
            entry = _completion(step_id, record)
            if entry is not None:
                out.append(entry)
    for item in view["workItems"]:
        esc, step = item["escalation"], item["stepId"]
        if esc is not None:
            out.append(Entry(esc["at"], esc["by"], f"escalated {step}", step, [esc["note"]], "warn"))
        handoff = item["handoff"] or {}
        returned = handoff.get("returned")
        if returned is not None:
            out.append(
                Entry(returned["at"], returned["by"], f"returned {step}", step, [returned["note"]], "warn")
            )
        if handoff.get("issues"):
            out.append(
                Entry(None, None, f"last submission of {step} refused", step, list(handoff["issues"]), "bad")
            )
        if handoff.get("progress"):
            out.append(Entry(None, None, f"progress handed on at {step}", step, [handoff["progress"]]))
    ended = run["ended"]
    if ended is not None:
        word = "cancelled the run" if run["state"] == "cancelled" else f"run ended: {run['outcome']}"
        out.append(
            Entry(ended["at"], ended["by"], word, None, [ended["note"]] if ended["note"] else [], "bad")
        )
    timed = sorted((e for e in out if e.at is not None), key=lambda e: str(e.at))
    return [*timed, *(e for e in out if e.at is None)]


def _completion(step_id: str, rec: StepRecord) -> Entry | None:
    if "at" not in rec and "by" not in rec:
        return None
    decision = rec.get("decision")
    lines = [text for text in (rec.get("summary"), rec.get("note")) if text]
    if "output" in rec:
        lines += [f"{k}: {value_text(v, 120)}" for k, v in rec["output"].items()]
    if decision is not None:
        what = f"{decision} {step_id}"
        tone = "bad" if decision in ("rejected", "failed") else "good"
    else:
        what, tone = f"completed {step_id}" + (f" → {rec['next']}" if rec.get("next") else ""), "good"
    check = rec.get("check")
    if check is not None:
        lines.append(f"check: {check.get('verdict')}")
    return Entry(_at(rec.get("at")), rec.get("by"), what, step_id, lines, tone)


def claims(log: RunLog | None) -> dict[str, tuple[str, str]]:
    """Per step, the latest claim's holder and lease end, from the run log (get_run does not say)."""
    held: dict[str, tuple[str, str]] = {}
    for e in (log or {"entries": []})["entries"]:
        step = e["stepId"]
        if step is None:
            continue
        if e["kind"] in ("claimed", "renewed"):
            held[step] = (str(e["by"]), str(e["detail"].get("leaseUntil")))
    return held


def timeline_lines(items: list[Item], palette: Palette, source: str) -> list[Line]:
    """Each entry as `time · who · what` and its lines in full, indented; `source` leads."""
    tones = {"good": palette.success, "bad": palette.error, "warn": palette.warning}
    lines: list[Line] = [(source, palette.muted)]
    for item in items:
        if isinstance(item, Gap):
            lines.append(
                (
                    f"… {item.dropped} earlier entries dropped (the server keeps a run's first and latest)",
                    palette.muted,
                )
            )
            continue
        times = f" ×{item.count}" if item.count > 1 else ""
        when = stamp(item.at) if item.at else "—"
        lines.append((f"{when}  {item.who or SERVER}  {item.what}{times}", tones.get(item.tone, "")))
        lines += [(f"    {text}", "") for text in item.lines]
    return lines
