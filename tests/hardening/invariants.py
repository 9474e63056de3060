"""Invariants of a data folder, read straight from its database after the server is gone.

Each check returns readable lines, one per break, so a failing test names every one at once:
- index tables equal to run documents: the runs columns, ready agent steps, open work items, timers,
  overdue steps and input keys are exactly what the run document implies (`runtime.derive`);
- one lease holder: a step has a claim exactly when it is claimed, and no claim indexed its token in
  the `tokens` table (signed tokens need none; the table holds only tokens from before them);
- no open work on ended runs: no unfinished step, claim, work item, index row or timer;
- history in order: every step's completions are in time order, within the run's start and last
  update, and no time is later than the server time the folder recorded.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine import document
from engine.org import OrgConfig
from engine.runtime.derive import derive
from engine.runtime.machine import Machine
from engine.store.state import UNFINISHED, Run, parse_stamp
from engine.tools.context import canonical


def _second(value: str) -> datetime:
    """A stamp or a wire time, to the second (wire times carry no fraction)."""
    if "." in value:
        return parse_stamp(value).replace(microsecond=0)
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def check_store(data: Path, org: OrgConfig) -> tuple[list[str], int]:
    """(every invariant break, the number of runs checked)."""
    db = sqlite3.connect(data / "engine.db")
    try:
        return _check(db, org)
    finally:
        db.close()


def _check(db: sqlite3.Connection, org: OrgConfig) -> tuple[list[str], int]:
    breaks: list[str] = []
    versions = {
        (name, version): (document.load(text).process, json.loads(bindings))
        for name, version, text, bindings in db.execute("SELECT name, version, text, bindings FROM versions")
    }
    mark_row = db.execute("SELECT value FROM meta WHERE key = 'server_time'").fetchone()
    mark = None if mark_row is None else _second(mark_row[0])
    rows = db.execute("SELECT seq, id, state, outcome, updated_at, doc FROM runs ORDER BY seq").fetchall()
    for seq, run_id, state, outcome, updated_at, doc in rows:
        run = Run.from_json(doc)
        run.data = {
            sid: json.loads(data)
            for sid, data in db.execute("SELECT step_id, data FROM run_steps WHERE run_seq = ?", (seq,))
        }
        process, bindings = versions[(run.process, run.version)]
        assert process is not None
        machine = Machine(run, process, parse_stamp(run.updated_at), org, bindings)
        rows_of = _index_rows(db, run_id, seq)
        derived = derive(machine)
        expected = {
            "runs": (run.state, run.outcome, run.updated_at),
            "ready_agent_steps": sorted(derived.agent_steps),
            "work_items": sorted(derived.work_items),
            "timers": sorted(derived.timers),
            "overdue_steps": sorted(derived.overdue),
            "run_inputs": sorted((k, canonical(v)) for k, v in run.inputs.items()),
        }
        actual = {"runs": (state, outcome, updated_at), **rows_of}
        for table, want in expected.items():
            if actual[table] != want:
                breaks.append(f"{run_id}: {table} is {actual[table]}, the document implies {want}")
        breaks += _leases(run)
        breaks += _ended(run, rows_of)
        breaks += _history(run, mark)
    indexed = db.execute("SELECT COUNT(*) FROM tokens").fetchone()[0]
    if indexed:
        breaks.append(f"the tokens table holds {indexed} rows: claims and renews index no token")
    return breaks, len(rows)


def _index_rows(db: sqlite3.Connection, run_id: str, seq: int) -> dict[str, Any]:
    return {
        "ready_agent_steps": sorted(
            db.execute(
                "SELECT step_id, available_at, step_index FROM ready_agent_steps WHERE run_id = ?", (run_id,)
            ).fetchall()
        ),
        "work_items": sorted(
            db.execute(
                "SELECT id, step_id, assignee_kind, assignee, created_at, item_seq FROM work_items WHERE run_id = ?",
                (run_id,),
            ).fetchall()
        ),
        "timers": sorted(
            db.execute("SELECT at, kind, step_id FROM timers WHERE run_id = ?", (run_id,)).fetchall()
        ),
        "overdue_steps": sorted(
            row[0] for row in db.execute("SELECT step_id FROM overdue_steps WHERE run_id = ?", (run_id,))
        ),
        "run_inputs": sorted(
            db.execute("SELECT name, value FROM run_inputs WHERE run_seq = ?", (seq,)).fetchall()
        ),
    }


def _leases(run: Run) -> list[str]:
    return [
        f"{run.id}.{sid}: state {st.state} with claim {st.claim}"
        for sid, st in run.steps.items()
        if (st.state == "claimed") != (st.claim is not None)
    ]


def _ended(run: Run, rows: dict[str, Any]) -> list[str]:
    if not run.is_over:
        return []
    out = []
    open_steps = [sid for sid, st in run.steps.items() if st.state in UNFINISHED or st.claim is not None]
    if open_steps or run.work_items or run.events:
        out.append(f"{run.id}: {run.state} with open steps {open_steps}, items {list(run.work_items)}")
    for table in ("ready_agent_steps", "work_items", "timers", "overdue_steps"):
        if rows[table]:
            out.append(f"{run.id}: {run.state} but {table} still holds {rows[table]}")
    return out


def _history(run: Run, mark: datetime | None) -> list[str]:
    out = []
    started, updated = _second(run.started_at), _second(run.updated_at)
    if updated < started:
        out.append(f"{run.id}: updated {run.updated_at} before it started {run.started_at}")
    if mark is not None and updated > mark:
        out.append(f"{run.id}: updated {run.updated_at} after the recorded server time {mark}")
    for sid, record in run.data.items():
        records = [*record.get("history", []), *([record] if "at" in record else [])]
        times = [_second(r["at"]) for r in records if "at" in r]
        if times != sorted(times):
            out.append(f"{run.id}.{sid}: completions out of order {[r.get('at') for r in records]}")
        if times and (times[0] < started or times[-1] > updated):
            out.append(f"{run.id}.{sid}: a completion outside {run.started_at}..{run.updated_at}: {times}")
    if run.ended is not None and not started <= _second(run.ended["at"]) <= updated:
        out.append(f"{run.id}: ended at {run.ended['at']} outside {run.started_at}..{run.updated_at}")
    return out
