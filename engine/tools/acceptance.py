"""Spec §6 rule 3: whether a submission (agent `submit`, person `decide completed`) completes its step.

Every issue is collected and returned at once, the run-data cap among them; the caller changes nothing
when there is any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.document.fields import check_values
from engine.document.model import Step
from engine.files import Files, Unverified
from engine.store.records import copied, text_of
from engine.store.state import Run, run_data_bytes
from engine.tools.arguments import EvidenceItem


@dataclass
class Submission:
    output: dict[str, Any] | None
    evidence: list[EvidenceItem] | None
    summary: str | None
    next: str | None
    reason: str | None
    summary_required: bool


async def accept(
    files: Files, run: Run, step: Step, sub: Submission, by: str, at: str, cap: int
) -> tuple[list[str], dict[str, Any]]:
    """(issues, the run-data record the completion would write)."""
    # Copied: the record is kept (the writer's memory, `records`), the caller's value stays the caller's.
    output = copied(sub.output) if sub.output is not None else {}
    issues = [str(i) for i in check_values(step.output or (), output, "output")]
    evidence: list[dict[str, Any]] = []
    unverified: list[str] = []
    for item in sub.evidence or []:
        if item.kind == "link":
            evidence.append({"kind": "link", "ref": item.ref})
            continue
        try:
            record = await files.verify(item.ref)
        except Unverified as why:
            unverified.append(f"evidence {item.ref}: {why}")
            continue
        evidence.append({"kind": "file", "ref": item.ref, "sha256": record.sha256})
    # `evidence: [file]` is met only by a verified file (spec §5); free-text links never stand in.
    issues += [
        f"evidence: {kind} required"
        for kind in step.evidence or ()
        if not any(e["kind"] == kind for e in evidence)
    ]
    issues += unverified
    fields: dict[str, Any] = {"output": output}
    if sub.evidence:
        fields["evidence"] = evidence
    if step.routes is not None:
        allowed = [r.to for r in step.routes]
        if sub.next is None:
            issues.append(f"next: required, one of {', '.join(allowed)}")
        elif sub.next not in allowed:
            issues.append(f"next: '{sub.next}' is not one of {', '.join(allowed)}")
        if not (sub.reason or "").strip():
            issues.append("reason: required")
    else:
        if sub.next is not None:
            issues.append("next: not taken, this step's next is not a list")
        if sub.reason is not None:
            issues.append("reason: not taken, this step's next is not a list")
    if sub.summary_required and not (sub.summary or "").strip():
        issues.append("summary: missing")
    if sub.summary is not None and sub.summary.strip():
        fields["summary"] = sub.summary
    if step.routes is not None and sub.next is not None:
        fields["next"] = sub.next
        fields["reason"] = sub.reason or ""
    fields["by"] = by
    fields["at"] = at
    # The new record is added; an earlier one only moves into history, so this bounds the result. The
    # text of a large output is kept for measuring the record made of these fields (`Machine.record`).
    size = run_data_bytes(run) + len(text_of(fields))
    if size > cap:
        issues.append(f"run data: {size} bytes would exceed limits.runDataBytes ({cap})")
    return issues, fields
