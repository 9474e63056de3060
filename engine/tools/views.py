"""The wire shapes built from a run: run view, work item, claim result, `get_work` items.

Views never carry a token (spec §6 rule 2). Every `file` evidence item gets a fresh short-lived `url`
(spec §5), and every work item a snapshot of the run data as it is at this read (spec §3.4).
"""

from __future__ import annotations

from typing import Any

from engine.document.model import Process, Step
from engine.store.records import copied
from engine.store.state import UNFINISHED, Run, StepRun, WorkItem, snapshot_of, wire_of_stamp

NEW_REQUEST_ID = "<new UUID>"

DECISIONS = {
    "task": ["completed", "failed"],
    "approve": ["approved", "rejected", "failed"],
    "agent": ["returned", "completed", "failed"],
}
ESCALATED = DECISIONS["agent"]
"""An escalated step, agent or task (a task a check was unsure of), is returned, completed or failed."""


def decisions(item: WorkItem) -> list[str]:
    return list(ESCALATED if item.escalated else DECISIONS[item.kind])


def wire_time(value: str | None) -> str | None:
    return None if value is None else wire_of_stamp(value)


class Views:
    """Builds wire shapes; `sign` turns a file id into a short-lived URL."""

    def __init__(self, sign: Any) -> None:
        self._sign = sign

    def data(self, run: Run) -> dict[str, Any]:
        # Every object and array copied (strings and numbers are shared): the writer keeps the run and
        # its step records for its next write (`store.sqlite.cache`, `records`), and an in-process caller
        # (`Engine.call`) may edit what it is given.
        return {
            "inputs": copied(run.inputs),
            "steps": {sid: self._record(rec) for sid, rec in run.data.items()},
        }

    def _record(self, record: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in record.items():
            if key == "evidence":
                out[key] = self.evidence(value)
            elif key == "history":
                out[key] = [self._record(h) for h in value]
            else:
                out[key] = copied(value)
        return out

    def evidence(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {**copied(item), "url": self._sign(item["ref"])} if item["kind"] == "file" else copied(item)
            for item in items
        ]

    def run_view(self, run: Run, process: Process) -> dict[str, Any]:
        items = sorted(run.work_items.values(), key=lambda w: (w.created_at, w.seq))
        # The snapshot (a hash of all the run data) only when a work item carries it: most views,
        # an agent's submit among them, have none.
        snapshot = snapshot_of(run) if items else ""
        return {
            "run": run_header(run),
            "data": self.data(run),
            "steps": [step_view(step, run.steps[step.id]) for step in process.steps],
            "workItems": [self.work_item(run, process, item, snapshot) for item in items],
            "body": process.body,
        }

    def work_item(self, run: Run, process: Process, item: WorkItem, snapshot: str) -> dict[str, Any]:
        step = process.step(item.step_id)
        st = run.steps[item.step_id]
        takes_work = step.kind != "approve"
        view: dict[str, Any] = {
            "id": item.id,
            "stepId": item.step_id,
            "kind": item.kind,
            "text": step.instructions or "",
            "output": step.output_wire() if takes_work else None,
            "evidence": list(step.evidence) if takes_work and step.evidence else None,
            "next": step.routes_wire() if takes_work else None,
            "assignedTo": dict(item.assigned_to),
            "snapshot": snapshot,
            "due": wire_time(st.due_at),
            "escalation": self.escalation(st),
            "handoff": handoff(st),
            "decide": {
                "tool": "decide",
                "arguments": {
                    "runId": run.id,
                    "workItemId": item.id,
                    "snapshot": snapshot,
                    "requestId": NEW_REQUEST_ID,
                },
                "decisions": decisions(item),
            },
        }
        if run.mode == "test":
            view["mode"] = "test"
        return view

    def escalation(self, st: StepRun) -> dict[str, Any] | None:
        """`escalation`, with a held candidate's file evidence given fresh URLs like any run data."""
        if st.escalation is None:
            return None
        return {
            key: self._record(value) if key == "candidate" else copied(value)
            for key, value in st.escalation.items()
        }

    def claim_result(
        self, run: Run, process: Process, step: Step, token: str, expires_at: str
    ) -> dict[str, Any]:
        return {
            "token": token,
            "expiresAt": wire_time(expires_at),
            "mode": run.mode,
            "step": step_requirements(step),
            "handoff": handoff(run.steps[step.id]),
            "body": process.body,
            "data": self.data(run),
        }


def run_header(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "process": run.process,
        "version": run.version,
        "mode": run.mode,
        "state": run.state,
        "outcome": run.outcome,
        "ended": copied(run.ended),
        "startedBy": run.started_by,
        "startedAt": wire_time(run.started_at),
        "updatedAt": wire_time(run.updated_at),
    }


def step_view(step: Step, st: StepRun) -> dict[str, Any]:
    view: dict[str, Any] = {"id": step.id, "kind": step.kind, "state": st.state}
    if st.due_at is not None and st.state in UNFINISHED:
        view["due"] = wire_time(st.due_at)
        view["overdue"] = st.overdue
    return view


def step_requirements(step: Step) -> dict[str, Any]:
    return {
        "id": step.id,
        "instructions": step.instructions or "",
        "output": step.output_wire(),
        "evidence": list(step.evidence) if step.evidence else None,
        "next": step.routes_wire(),
    }


def handoff(st: StepRun) -> dict[str, Any] | None:
    return copied(st.handoff) if st.handoff else None


def agent_work_item(run: Run, step_id: str) -> dict[str, Any]:
    st = run.steps[step_id]
    return {
        "runId": run.id,
        "stepId": step_id,
        "process": run.process,
        "version": run.version,
        "mode": run.mode,
        "readySince": wire_time(st.ready_since),
        "due": wire_time(st.due_at),
        "overdue": st.overdue,
        "handoff": handoff(st),
        "claim": {
            "tool": "claim",
            "arguments": {"runId": run.id, "stepId": step_id, "requestId": NEW_REQUEST_ID},
        },
    }


def run_summary(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "process": row.process,
        "version": row.version,
        "state": row.state,
        "outcome": row.outcome,
        "startedAt": wire_time(row.started_at),
        "updatedAt": wire_time(row.updated_at),
        "inputs": row.inputs,
    }
