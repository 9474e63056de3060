"""The index rows a run's state implies, recomputed after every write (never edited on their own)."""

from __future__ import annotations

from engine.runtime.machine import Machine
from engine.store.base import DerivedRows
from engine.store.state import UNFINISHED


def derive(machine: Machine) -> DerivedRows:
    run, process = machine.run, machine.process
    if run.is_over:
        return DerivedRows([], [], [])
    agent_steps: list[tuple[str, str, int]] = []
    for index, step in enumerate(process.steps):
        st = run.steps[step.id]
        if step.kind != "agent":
            continue
        if st.state == "ready" and st.ready_since:
            agent_steps.append((step.id, st.ready_since, index))
        elif st.state == "claimed" and st.claim:
            agent_steps.append((step.id, st.claim.expires_at, index))
    items = [
        (w.id, w.step_id, *next(iter(w.assigned_to.items())), w.created_at, w.seq)
        for w in run.work_items.values()
    ]
    overdue = [sid for sid, st in run.steps.items() if st.overdue and st.state in UNFINISHED]
    return DerivedRows(agent_steps, items, machine.timers(), overdue)
