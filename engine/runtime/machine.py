"""The state machine: every transition a run can make, applied to its in-memory state.

Tools decide *whether* a change is allowed; this module decides *what* the change does, including
every automatic transition it triggers (finish, a wait already due, fork, join, a held event), so a
write returns with the run fully settled (spec §4). Nothing here touches storage or the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from engine.clock import rfc3339
from engine.document import durations
from engine.document.fields import parse_datetime
from engine.document.model import JOIN, Process, Step
from engine.ids import IdSource, new_id
from engine.notify import ESCALATION, NEW_WORK, OVERDUE, RUN_ENDED
from engine.org import OPERATORS_GROUP, OrgConfig
from engine.runtime.journal import Journal
from engine.store.records import made
from engine.store.state import (
    SERVER,
    UNFINISHED,
    Claim,
    HeldEvent,
    Notification,
    Run,
    StepRun,
    WorkItem,
    parse_stamp,
    stamp,
    wire_of_stamp,
)

MAX_CHAIN = 10_000
"""Automatic transitions one write may trigger; a valid document is acyclic, this only bounds bugs."""


@dataclass
class Machine:
    """One run, its pinned process version, and the moment the current write happens."""

    run: Run
    process: Process
    now: datetime
    org: OrgConfig
    bindings: dict[str, str]
    notifications: list[Notification] = field(default_factory=list)
    ids: IdSource = new_id
    """Where work item ids come from (the engine's id source)."""
    _chain: int = 0
    journal: Journal = field(init=False)
    """The run log entries of this write (`runtime.journal`)."""

    def __post_init__(self) -> None:
        self.journal = Journal(self.run)

    def log(
        self,
        kind: str,
        step_id: str | None = None,
        by: str | None = None,
        note: str | None = None,
        **detail: Any,
    ) -> None:
        """Record what happened at this moment in the run's log (`by` None or SERVER: the server)."""
        self.journal.add(kind, self.at, step_id=step_id, by=by, note=note, detail=detail)

    # --- time and bookkeeping ----------------------------------------------------------------------

    @property
    def at(self) -> str:
        """This moment in wire form, cut from its storage stamp (which every write makes: no second
        formatting of the same time)."""
        return wire_of_stamp(stamp(self.now))

    def _tick(self) -> int:
        self.run.counter += 1
        self._chain += 1
        if self._chain > MAX_CHAIN:
            raise RuntimeError("automatic transitions did not settle")
        return self.run.counter

    def step(self, step_id: str) -> Step:
        return self.process.step(step_id)

    def settle(self) -> None:
        """Recompute the run state from its steps (spec §3.5) and stamp the write."""
        self.run.updated_at = stamp(self.now)
        self._recompute_state()

    def _recompute_state(self) -> None:
        if self.run.is_over:
            return
        states = {s.state for s in self.run.steps.values()}
        self.run.state = "active" if states & {"ready", "claimed"} else "waiting"

    # --- start and entering steps ------------------------------------------------------------------

    def start(self) -> None:
        self.run.steps = {s.id: StepRun() for s in self.process.steps}
        self.run.started_at = stamp(self.now)
        self.log("run_started", by=self.run.started_by, inputs=self.run.inputs, mode=self.run.mode)
        self.enter(self.process.steps[0].id)
        self.settle()

    def enter(self, step_id: str) -> None:
        """Reach a step: make it ready, waiting on someone or something, or act on it at once."""
        if self.run.is_over:
            return
        step, st = self.step(step_id), self.run.steps[step_id]
        st.entered = self._tick()
        st.ready_since = stamp(self.now)
        st.claim, st.escalation, st.handoff, st.timer_at, st.work_item = None, None, None, None, None
        st.overdue = False
        st.due_at = (
            stamp(self.now + timedelta(seconds=durations.parse_duration(step.due) or 0)) if step.due else None
        )
        if step.kind == "agent":
            st.state = "ready"
            self.log("step_ready", step_id, stepKind="agent")
        elif step.kind in ("task", "approve"):
            assignee = self._assignee(step)
            if assignee is None:
                self.fail(step_id, SERVER, f"person {step.person} resolves to no person in the organization")
                return
            st.state = "waiting"
            item = self._open_item(step_id, step.kind, assignee)
            self.log("step_ready", step_id, stepKind=step.kind, workItem=item.id, assignedTo=assignee)
        elif step.kind == "wait":
            st.state = "waiting"
            st.timer_at = stamp(self.now + timedelta(seconds=durations.parse_duration(step.value) or 0))
            self.log("wait_started", step_id, until=wire_of_stamp(st.timer_at))
            self._continue_if_due(step_id)
        elif step.kind == "wait_until":
            when = parse_datetime(self._lookup(step.value))
            if when is None:
                self.fail(step_id, SERVER, f"{step.value} is missing or not a datetime")
                return
            st.state = "waiting"
            st.timer_at = stamp(when)
            self.log("wait_started", step_id, until=rfc3339(when))
            self._continue_if_due(step_id)
        elif step.kind == "wait_for":
            st.state = "waiting"
            if step.timeout:
                st.timer_at = stamp(self.now + timedelta(seconds=durations.parse_duration(step.timeout) or 0))
            timeout = None if st.timer_at is None else wire_of_stamp(st.timer_at)
            self.log("wait_started", step_id, event=step.value, timeout=timeout)
            held = next((e for e in self.run.events if e.name == step.value), None)
            if held is not None:
                self.run.events.remove(held)
                self.log("wait_ended", step_id, by=held.by, event=held.name, heldSince=held.at)
                # The sender is `by`; `at` is when this step completed, not when the event was sent.
                self.complete(step_id, {"output": held.data, "by": held.by, "at": self.at})
        elif step.kind == "parallel":
            st.state = "waiting"
            st.joined = []
            self.log("step_ready", step_id, stepKind="parallel", branches=list(step.branches))
            for entry in step.branches:
                self.enter(entry)
        elif step.kind == "finish":
            st.state = "done"
            self.end("ended", step.value, SERVER, None)

    def _continue_if_due(self, step_id: str) -> None:
        st = self.run.steps[step_id]
        if st.timer_at is not None and parse_stamp(st.timer_at) <= self.now:
            self.log("wait_ended", step_id, until=wire_of_stamp(st.timer_at))
            self.complete(step_id, {"by": SERVER, "at": self.at})

    def _assignee(self, step: Step) -> dict[str, str] | None:
        who = step.person or ""
        if who == "initiator":
            return {"person": self.run.initiator} if self.run.initiator else None
        if "." in who:
            value = self._lookup(who)
            return {"person": value} if isinstance(value, str) and self.org.knows_person(value) else None
        group = self.bindings.get(who)
        return {"group": group} if group else None

    def _lookup(self, path: str) -> Any:
        """A value at `inputs.<f>` or `steps.<id>.output.<f>` in run data, or None."""
        parts = path.split(".")
        if len(parts) == 2 and parts[0] == "inputs":
            return self.run.inputs.get(parts[1])
        if len(parts) == 4 and parts[0] == "steps" and parts[2] == "output":
            output = self.run.data.get(parts[1], {}).get("output")
            return output.get(parts[3]) if isinstance(output, dict) else None
        return None

    def _open_item(
        self, step_id: str, kind: Any, assigned_to: dict[str, str], *, escalated: bool = False
    ) -> WorkItem:
        """Open the step's work item and tell its assignees (an escalation's: the operators)."""
        item = WorkItem(self.ids("w"), step_id, kind, assigned_to, stamp(self.now), self._tick(), escalated)
        self.run.work_items[item.id] = item
        self.run.item_ids.append(item.id)
        self.run.steps[step_id].work_item = item.id
        self._notify(ESCALATION if escalated else NEW_WORK, step_id, self._people(assigned_to), item.id)
        return item

    def _people(self, assigned_to: dict[str, str]) -> list[str]:
        """The people an assignee stands for: the person, or the group's members."""
        if "person" in assigned_to:
            return [assigned_to["person"]]
        return self.org.group_members(assigned_to["group"])

    def _notify(
        self,
        kind: str,
        step_id: str | None,
        recipients: list[str],
        work_item: str | None = None,
        outcome: str | None = None,
    ) -> None:
        self.notifications.append(
            Notification(
                id=self.ids("n"),
                kind=kind,
                run_id=self.run.id,
                process=self.run.process,
                step_id=step_id,
                recipients=tuple(dict.fromkeys(recipients)),
                at=self.at,
                test=self.run.mode == "test",
                work_item=work_item,
                outcome=outcome,
            )
        )

    def _close_item(self, step_id: str) -> None:
        """The step's open work item goes; an unsure check it held ends with it."""
        st = self.run.steps[step_id]
        if st.work_item is not None:
            self.run.work_items.pop(st.work_item, None)
            st.work_item = None
        self._release(step_id)

    # --- completing and routing --------------------------------------------------------------------

    def record(self, step_id: str, fields: dict[str, Any]) -> None:
        """Make `fields` the step's current run data, moving any earlier completion into history."""
        current = self.run.data.get(step_id, {"history": []})
        history = list(current.get("history", []))
        previous = {k: v for k, v in current.items() if k != "history"}
        if previous:
            history.append(previous)
        self.run.data[step_id] = record = {**fields, "history": history}
        made(record)

    def complete(self, step_id: str, fields: dict[str, Any], chosen: str | None = None) -> None:
        """The step is done with `fields` as its run data; continue at `chosen` or its `next`."""
        st = self.run.steps[step_id]
        self._close_item(step_id)
        st.state, st.claim, st.escalation, st.timer_at = "done", None, None, None
        st.handoff = None
        st.completed = self._tick()
        self.record(step_id, fields)
        self.go(step_id, chosen or self.step(step_id).next)

    def go(self, from_id: str, target: str | None) -> None:
        if target is None or self.run.is_over:
            return
        if target == JOIN:
            self._join(from_id)
        else:
            self.enter(target)

    def _join(self, step_id: str) -> None:
        parallel_id = self.process.branch_of(step_id)
        if parallel_id is None:
            raise RuntimeError(f"{step_id} joins outside a branch")
        parallel = self.step(parallel_id)
        entry = next(e for e in parallel.branches if step_id in self.process.branch_steps(e))
        st = self.run.steps[parallel_id]
        if entry not in st.joined:
            st.joined.append(entry)
        if set(st.joined) == set(parallel.branches):
            st.state = "done"
            st.completed = self._tick()
            self.go(parallel_id, parallel.next)

    def approve(self, step_id: str, by: str, note: str | None) -> None:
        fields: dict[str, Any] = {"decision": "approved", "by": by, "at": self.at}
        if note:
            fields["note"] = note
        self.complete(step_id, fields)

    def reject(self, step_id: str, by: str, note: str) -> None:
        """Spec §3.1 rework: back to `on_reject`, later completions to history; or end `rejected`."""
        step, st = self.step(step_id), self.run.steps[step_id]
        self._close_item(step_id)
        self.record(step_id, {"decision": "rejected", "note": note, "by": by, "at": self.at})
        st.completed = self._tick()
        if step.on_reject is None:
            st.state = "done"
            self.end("ended", "rejected", by, note)
            return
        # The approval is rewound like the steps around it only when the run goes back to before it;
        # a forward `on_reject` (or one to a route never taken) leaves it done, with its decision.
        rewound = self._rewind(step.on_reject, step_id)
        st.state = None if rewound else "done"
        self.log("rework", step_id, by=by, note=note, to=step.on_reject)
        self.enter(step.on_reject)

    def _rewind(self, target: str, rejecting: str) -> bool:
        """Steps completed since `target` was last reached lose their current fields (kept in history).

        "After the returned-to step" (spec §3.1) is read in time: a step is rewound when it was
        reached or completed later than the target's last entry. A target never reached (a forward
        `on_reject`, a route the run did not take) rewinds nothing. Inside a branch only that branch
        is touched; from after a join to the parallel step, the whole region (parallel profile §3).
        True when the rejecting approval itself lies after the target (so it is rewound too).
        """
        threshold = self.run.steps[target].entered
        if threshold == 0 or self.run.steps[rejecting].entered <= threshold:
            return False
        branch_of = self.process.branch_of(rejecting)
        if branch_of is not None:
            parallel = self.step(branch_of)
            entry = next(e for e in parallel.branches if rejecting in self.process.branch_steps(e))
            scope = self.process.branch_steps(entry)
        else:
            scope = tuple(s.id for s in self.process.steps)
        for sid in scope:
            st = self.run.steps[sid]
            if sid in (target, rejecting) or max(st.entered, st.completed) <= threshold:
                continue
            self._close_item(sid)
            current = self.run.data.get(sid)
            if current is not None and any(k != "history" for k in current):
                self.run.data[sid] = {"history": [*current.get("history", []), _current(current)]}
            st.state, st.claim, st.escalation, st.timer_at, st.due_at = None, None, None, None, None
            st.overdue, st.handoff, st.joined = False, None, []
        return True

    def fail(self, step_id: str, by: str, note: str) -> None:
        """A `failed` decision, or a server step that cannot proceed: the run ends `failed`."""
        st = self.run.steps[step_id]
        self._close_item(step_id)
        st.state, st.claim = "failed", None
        self.record(step_id, {"decision": "failed", "note": note, "by": by, "at": self.at})
        self.end("ended", "failed", by, note)

    def end(self, state: str, outcome: str | None, by: str, note: str | None) -> None:
        """Terminal cleanup (spec §3.5): unfinished steps cancelled, items removed, tokens stop."""
        run = self.run
        run.state = "cancelled" if state == "cancelled" else "ended"
        run.outcome = outcome
        run.ended = {"by": by, "at": self.at, "note": note}
        if run.state == "cancelled":
            self.log("cancelled", by=by, note=note)
        else:
            self.log("ended", by=by, note=note, outcome=outcome)
        for sid, st in run.steps.items():
            self._release(sid)
            if st.state in UNFINISHED:
                st.state = "cancelled"
            st.claim, st.timer_at, st.work_item = None, None, None
        run.work_items.clear()
        run.events.clear()
        self._notify(RUN_ENDED, None, [run.initiator] if run.initiator else [], outcome=outcome)

    # --- agent work --------------------------------------------------------------------------------

    def claim(self, step_id: str, by: str, token_hash: str, lease_seconds: int) -> str:
        st = self.run.steps[step_id]
        expires = stamp(self.now + timedelta(seconds=lease_seconds))
        st.state, st.claim = "claimed", Claim(token_hash, by, expires)
        self.log("claimed", step_id, by=by, leaseUntil=wire_of_stamp(expires), progress=None)
        return expires

    def renew(self, step_id: str, token_hash: str, lease_seconds: int, progress: str | None) -> str:
        claim = self.run.steps[step_id].claim
        if claim is None:
            raise RuntimeError("renew without a claim")
        claim.token_hash = token_hash
        claim.expires_at = stamp(self.now + timedelta(seconds=lease_seconds))
        if progress is not None:
            claim.progress = progress
        self.log(
            "renewed",
            step_id,
            by=claim.by,
            leaseUntil=wire_of_stamp(claim.expires_at),
            progress=claim.progress,
        )
        return claim.expires_at

    def refuse(self, step_id: str, issues: list[str], check: dict[str, Any] | None = None) -> None:
        """A submission was not accepted: the claim stands, the issues go to the next attempt.

        So does the check verdict that refused it, if one did; an older verdict goes, so the handoff's
        `check` always explains its `issues`.
        """
        st = self.run.steps[step_id]
        handoff = {k: v for k, v in (st.handoff or {}).items() if k != "check"}
        handoff["issues"] = issues
        if check is not None:
            handoff["check"] = check
        st.handoff = handoff
        by = None if st.claim is None else st.claim.by
        self.log("submission_refused", step_id, by=by, issues=issues)

    def escalate(self, step_id: str, by: str, note: str) -> WorkItem:
        """The step waits on the operators; a task's own work item gives way to the escalation's."""
        st = self.run.steps[step_id]
        self._close_item(step_id)
        st.state, st.claim = "waiting", None
        st.escalation = {"note": note, "by": by, "at": self.at}
        item = self._open_item(step_id, self.step(step_id).kind, {"group": OPERATORS_GROUP}, escalated=True)
        self.log("escalated", step_id, by=by, note=note, workItem=item.id)
        return item

    def hold(
        self, step_id: str, note: str, check: dict[str, Any], candidate: dict[str, Any], issues: list[str]
    ) -> WorkItem:
        """An unsure check (check profile §3): the step is escalated as `escalate` does.

        The server escalates, with the verdict and the held submission (the candidate) on the
        escalation. Until a person decides, run data shows the verdict as the step's `check`, with
        any earlier completion of the step in its history; `_release` puts the record back.
        """
        item = self.escalate(step_id, SERVER, note)
        st = self.run.steps[step_id]
        st.escalation = {**(st.escalation or {}), "check": check, "candidate": candidate}
        before = self.run.data.get(step_id)
        st.hold = {"record": before, "issues": issues}
        history = list(before.get("history", [])) if before else []
        if before and (earlier := _current(before)):
            history.append(earlier)
        self.run.data[step_id] = {"check": check, "history": history}
        return item

    def _release(self, step_id: str) -> None:
        """End a hold: the step's run data is again what it was before the unsure verdict."""
        st = self.run.steps[step_id]
        if st.hold is None:
            return
        before = st.hold["record"]
        if before is None:
            self.run.data.pop(step_id, None)
        else:
            self.run.data[step_id] = before
        st.hold = None

    def give_back(self, step_id: str, by: str, note: str) -> None:
        """An escalated step `returned` by a person: the same attempt again, the note in handoff.

        An agent step is ready to claim; a task goes back to its assignee's work item. After an
        unsure check the verdict and its lines travel too, as after a `fail`.
        """
        st, step = self.run.steps[step_id], self.step(step_id)
        check = (st.escalation or {}).get("check")
        lines = None if st.hold is None else st.hold["issues"]
        self._close_item(step_id)
        st.escalation = None
        handoff = {**(st.handoff or {}), "returned": {"note": note, "by": by, "at": self.at}}
        if check is not None:
            handoff.update(issues=lines or [], check=check)
        st.handoff = handoff
        st.ready_since = stamp(self.now)
        self.log("returned", step_id, by=by, note=note)
        if step.kind != "task":
            st.state = "ready"
            return
        assignee = self._assignee(step)
        if assignee is None:
            self.fail(step_id, SERVER, f"person {step.person} resolves to no person in the organization")
            return
        st.state = "waiting"
        self._open_item(step_id, "task", assignee)

    # --- time and events ---------------------------------------------------------------------------

    def _end_lease(self, step_id: str) -> None:
        """A lease that ended makes its step claimable at once, progress handed to the next attempt."""
        st = self.run.steps[step_id]
        if st.claim is None:
            raise RuntimeError("a lease ended without a claim")
        if st.claim.progress:
            st.handoff = {**(st.handoff or {}), "progress": st.claim.progress}
        lease = wire_of_stamp(st.claim.expires_at)
        self.log(
            "timed_out",
            step_id,
            timer="lease",
            agent=st.claim.by,
            leaseUntil=lease,
            progress=st.claim.progress,
        )
        st.state, st.ready_since, st.claim = "ready", st.claim.expires_at, None

    def timers(self) -> list[tuple[str, str, str]]:
        """Every pending (at, kind, step_id) of the run, leases included (the store's `timers` index)."""
        out: list[tuple[str, str, str]] = []
        for sid, st in self.run.steps.items():
            if st.state not in UNFINISHED:
                continue
            if st.due_at and not st.overdue:
                out.append((st.due_at, "due", sid))
            if st.timer_at and st.state == "waiting":
                out.append((st.timer_at, "timeout" if self.step(sid).kind == "wait_for" else "wait", sid))
            if st.state == "claimed" and st.claim:
                out.append((st.claim.expires_at, "lease", sid))
        return out

    def catch_up(self) -> None:
        """Apply every timer due by `now`, oldest first (spec §6 rule 1: waits time out into steps).

        Each timer is applied at its own due time, with everything it sets off, as if the timer loop
        had run exactly then, so a run's state never depends on how late a tick or a write came. The
        run's `updatedAt` becomes the last such time; a write stamps its own time after this.
        """
        until = self.now
        try:
            while not self.run.is_over:
                pending = min(self.timers(), default=None)
                if pending is None or parse_stamp(pending[0]) > until:
                    break
                at, kind, sid = pending
                self.now = parse_stamp(at)
                self.run.updated_at = stamp(self.now)
                if kind == "lease":
                    self._end_lease(sid)
                elif kind == "due":
                    self._overdue(sid)
                elif kind == "wait":
                    self.log("wait_ended", sid, until=rfc3339(self.now))
                    self.complete(sid, {"by": SERVER, "at": self.at})
                else:
                    self.log("timed_out", sid, timer="wait_for", next=self.step(sid).on_timeout)
                    self.complete(sid, {"by": SERVER, "at": self.at}, self.step(sid).on_timeout)
        finally:
            self.now = until
        self._recompute_state()

    def _overdue(self, step_id: str) -> None:
        """Spec §2.2 `due`: mark the step and notify its assignees and the operators; work stays open."""
        st = self.run.steps[step_id]
        st.overdue = True
        self.log("overdue", step_id, due=None if st.due_at is None else wire_of_stamp(st.due_at))
        item = self.run.work_items.get(st.work_item or "")
        assignees = [] if item is None else self._people(item.assigned_to)
        self._notify(OVERDUE, step_id, [*assignees, *self.org.operators()], st.work_item)

    def deliver(self, name: str, data: dict[str, Any], by: str) -> str | None:
        """Spec §3.6: satisfy one ready `wait_for` on `name`, or hold the event for a later one."""
        for step in self.process.steps:
            st = self.run.steps[step.id]
            if step.kind == "wait_for" and step.value == name and st.state == "waiting":
                self.log("event_received", step.id, by=by, event=name, held=False)
                self.log("wait_ended", step.id, by=by, event=name)
                self.complete(step.id, {"output": data, "by": by, "at": self.at})
                return step.id
        self.log("event_received", by=by, event=name, held=True)
        self.run.events.append(HeldEvent(name, data, by, self.at))
        return None


def _current(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "history"}
