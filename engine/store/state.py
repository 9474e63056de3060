"""A run's whole state as plain dataclasses: what the store persists as one JSON document.

Everything the tools answer from (step states, claims, open work items, held events, timers) is
derived from this document, so a run is consistent by construction after any write, and the store's
index tables can always be recomputed from it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from engine.clock import keeping_last
from engine.store.records import compact, counted, measure

RunState = Literal["active", "waiting", "ended", "cancelled"]
StepStateName = Literal["ready", "claimed", "waiting", "done", "failed", "cancelled"]
UNFINISHED = ("ready", "claimed", "waiting")
SERVER = "server"


@keeping_last
def stamp(when: datetime) -> str:
    """A sortable, exact timestamp for storage and ordering (microseconds, UTC):
    `2026-10-06T12:00:00.000000Z` (isoformat, not strftime: faster, and it runs on every write; its
    arguments by position, which it parses faster)."""
    return when.astimezone(UTC).isoformat("T", "microseconds")[:-6] + "Z"


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


MARK_AHEAD = timedelta(seconds=1)
"""How far ahead of a write's time the server time mark is recorded (`clock_mark`)."""


def clock_mark(at: str) -> str:
    """The server time mark a write at `at` records when `at` passed the one recorded: `MARK_AHEAD`
    later, so the writes of the next second leave the mark's row alone (one page less in each of their
    commits) and a restart, which resumes at or after the mark, still never goes back."""
    return stamp(parse_stamp(at) + MARK_AHEAD)


def wire_of_stamp(text: str) -> str:
    """The wire timestamp (`2026-10-06T12:00:00Z`, second precision) of a storage stamp."""
    return text[:19] + "Z"


def stamp_of_wire(text: str) -> str:
    """The storage stamp of a wire timestamp (`2026-10-06T12:00:00Z`), so the two can be compared."""
    return stamp(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC))


@dataclass
class Claim:
    token_hash: str
    by: str
    expires_at: str
    progress: str | None = None


@dataclass
class StepRun:
    state: StepStateName | None = None
    ready_since: str | None = None
    """When the step last became claimable or waiting: orders `get_work`."""
    entered: int = 0
    """Run-local sequence number of the last time the step was reached (rework scope)."""
    completed: int = 0
    due_at: str | None = None
    overdue: bool = False
    claim: Claim | None = None
    handoff: dict[str, Any] | None = None
    escalation: dict[str, Any] | None = None
    work_item: str | None = None
    timer_at: str | None = None
    """A wait's continuation, a `wait_until` time, or a `wait_for` timeout."""
    joined: list[str] = field(default_factory=list)
    """Parallel step: the branch entries whose branch reached `join`."""
    hold: dict[str, Any] | None = None
    """Set while an unsure check waits on a person (check profile §3): `record`, the step's run data
    before the verdict was shown in its place (None: there was none), and `issues`, the verdict's
    lines for `handoff.issues` if the step is returned."""


_STEP_DEFAULTS = dict(vars(StepRun()))
"""Each field of a step and its value in a fresh one."""
_STEP_FIELDS = tuple((key, default) for key, default in _STEP_DEFAULTS.items() if key != "claim")
"""Those a step's document holds when off their defaults (`claim` it always holds)."""


def _step_doc(st: StepRun) -> dict[str, Any]:
    """A step in the run document: only the fields off their defaults (half the text to encode and
    store for a typical run; `from_json` puts the defaults back), and `claim` always, which servers
    before this one expect."""
    fields = vars(st)
    if fields == _STEP_DEFAULTS:  # a step not reached yet: most of a run's, one comparison in C
        return {"claim": None}
    doc = {key: fields[key] for key, default in _STEP_FIELDS if fields[key] != default}
    doc["claim"] = None if st.claim is None else vars(st.claim)
    return doc


@dataclass
class WorkItem:
    id: str
    step_id: str
    kind: Literal["agent", "task", "approve"]
    assigned_to: dict[str, str]
    created_at: str
    seq: int = 0
    """Run-local creation order: orders items opened in the same instant (a fork)."""
    escalated: bool = False
    """An escalation's item (by `escalate` or an unsure check): returned, completed or failed."""


@dataclass
class HeldEvent:
    """An event no ready `wait_for` took yet; the wait that takes it later records `by` (the sender)
    and its own completion time, not `at`, which is when the event was sent."""

    name: str
    data: dict[str, Any]
    by: str
    at: str


@dataclass(frozen=True)
class Notification:
    """One event in the outbox, for the people it concerns and the `[[notify]]` targets that want its
    kind: a step went overdue (spec §2.2 `due`), was escalated (§3.3), a work item opened for a person
    or group (§3.4), a run ended or was cancelled (§3.5). Written in the transaction of the change it
    reports, so it exists exactly when the change does. A test run's notifications are recorded with
    `test` set and never delivered (spec §3.3)."""

    id: str
    kind: str
    run_id: str
    process: str
    step_id: str | None
    """None for `run_ended`."""
    recipients: tuple[str, ...]
    """People (emails) the event is for, in order; may be empty (a run an agent started ended)."""
    at: str
    test: bool
    work_item: str | None = None
    outcome: str | None = None
    """`run_ended`: the run's outcome; None when it was cancelled."""


@dataclass
class Run:
    id: str
    process: str
    version: int
    mode: Literal["live", "test"]
    started_by: str
    started_at: str
    initiator: str | None
    inputs: dict[str, Any]
    state: RunState = "active"
    outcome: str | None = None
    ended: dict[str, Any] | None = None
    updated_at: str = ""
    data: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Run data `steps`: per step id, its current fields and `history`. A step's record is replaced
    whole when it changes, never edited in place: the store rewrites only records that are new objects."""
    steps: dict[str, StepRun] = field(default_factory=dict)
    work_items: dict[str, WorkItem] = field(default_factory=dict)
    item_ids: list[str] = field(default_factory=list)
    """Every work item ever opened on this run: tells `already_decided` from `not_found`."""
    events: list[HeldEvent] = field(default_factory=list)
    counter: int = 0
    log_seq: int = 0
    """The `seq` of the run log's latest entry."""
    log_tail: str | None = None
    """What that entry repeats on (`runtime.journal`), None when it is not one that repeats."""

    @property
    def is_over(self) -> bool:
        return self.state in ("ended", "cancelled")

    def run_data(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "steps": self.data}

    def to_json(self, *, data: bool = True) -> str:
        """The run as one JSON document; without `data` when the store keeps step data apart."""
        doc = dict(vars(self))
        if not data:
            del doc["data"]
        doc["steps"] = {sid: _step_doc(st) for sid, st in self.steps.items()}
        doc["work_items"] = {wid: vars(item) for wid, item in self.work_items.items()}
        doc["events"] = [vars(event) for event in self.events]
        # allow_nan=False: no NaN or infinity is ever stored (the tools refuse them on the way in).
        return compact(doc)

    @classmethod
    def from_json(cls, text: str) -> Run:
        raw = json.loads(text)
        steps = {}
        for sid, s in raw.pop("steps").items():
            claim = s.pop("claim", None)
            steps[sid] = StepRun(**s, claim=Claim(**claim) if claim else None)
        items = {wid: WorkItem(**w) for wid, w in raw.pop("work_items").items()}
        events = [HeldEvent(**e) for e in raw.pop("events")]
        return cls(**raw, steps=steps, work_items=items, events=events)


def data_bytes(value: Any) -> int:
    """Size of a JSON value as the run-data cap counts it: compact UTF-8, as `json` writes it."""
    return len(counted(value).encode())


def run_data_bytes(run: Run) -> int:
    """`data_bytes(run.run_data())`, from each step record's size measured once (`records`)."""
    size = len('{"inputs":,"steps":{}}') + data_bytes(run.inputs) + max(len(run.data) - 1, 0)
    for sid, record in run.data.items():
        size += data_bytes(sid) + 1 + measure(record)[0]
    return size


def snapshot_of(run: Run) -> str:
    """Spec §3.4: a hash of the run data, taken at read time and compared at decision time: of the
    run's id, its inputs and each step's id and record, a record by its digest measured once."""
    digest = hashlib.sha256(f"{run.id}\n".encode() + measure(run.inputs, record=False)[1])
    for sid in sorted(run.data):
        digest.update(f"\n{sid}\n".encode() + measure(run.data[sid])[1])
    return digest.hexdigest()[:32]
