"""The persistence interface the engine codes against: SQLite (embedded) and PostgreSQL (scale-out).

Reads go through the `Store`. Every write is one write request, `Store.write(fn)`: `fn` makes its
changes through the `Transaction` it is handed (run document, derived indexes, notifications,
the idempotency record), and they are kept all together or none of them. The caller is answered once
they are durable. `fn` may run more than once (a store may retry a transaction that lost a race), so
it must change nothing outside `tx` beyond pure computation.

The records below are frozen, but for those every write makes (`RequestRecord`, `DerivedRows`,
`LogEntry`, and the SQLite writer's `CachedRun`): plain dataclasses, never edited once made, because
a frozen dataclass sets each field through `object.__setattr__`, a cost every write would pay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar

from engine.store.state import Notification, Run

T = TypeVar("T")


class Conflict(Exception):
    """The transaction lost a race with another server on the same database (a duplicate key, a
    serialization failure, a deadlock) and was rolled back: run it again from the start."""


class StoreUnavailable(Exception):
    """The database cannot be reached (or did not answer in time); the caller answers `retry`."""


@dataclass(frozen=True)
class VersionRecord:
    name: str
    version: int
    content_hash: str
    text: str
    bindings: dict[str, str]
    published_at: str
    description: str
    inputs: dict[str, Any]
    requires: dict[str, Any] | None


@dataclass(frozen=True)
class FileRecord:
    id: str
    sha256: str
    bytes: int
    file_name: str
    content_type: str
    uploaded_by: str
    uploaded_at: str


@dataclass
class RequestRecord:
    request_id: str
    identity: str
    tool: str
    args_hash: str
    result: str
    """What a replay answers from, as JSON text (`tools.replays` says what it holds); stored as it is."""


@dataclass(frozen=True)
class RunRow:
    """What `list_runs` returns per run without reading the whole run document."""

    id: str
    process: str
    version: int
    state: str
    outcome: str | None
    started_at: str
    updated_at: str
    inputs: dict[str, Any]
    seq: int


@dataclass(frozen=True)
class AgentWorkRow:
    run_id: str
    step_id: str
    available_at: str
    run_seq: int
    step_index: int


@dataclass(frozen=True)
class PersonWorkRow:
    item_id: str
    run_id: str
    created_at: str
    run_seq: int
    item_seq: int


@dataclass
class DerivedRows:
    """Index rows recomputed from a run's state after every write."""

    agent_steps: list[tuple[str, str, int]]
    """(step_id, available_at, step_index) for ready or claimed agent steps."""
    work_items: list[tuple[str, str, str, str, str, int]]
    """(item_id, step_id, assignee_kind, assignee, created_at, item_seq) for open work items."""
    timers: list[tuple[str, str, str]]
    """(at, kind, step_id)."""
    overdue: list[str] = field(default_factory=list)
    """Step ids of unfinished steps past their `due`."""


@dataclass(frozen=True)
class StoreCounts:
    """What an operator watches, counted from indexes: cheap enough for every metrics scrape."""

    open_runs: int
    open_work_items: int
    overdue_steps: int
    outbox_backlog: int
    """Deliveries to `[[notify]]` targets not yet made: due, being tried, or waiting to be retried."""


DeliveryState = Literal["pending", "delivered", "given_up", "test"]
"""`test`: a test run's notification, recorded for the target and never sent (spec §3.3)."""


@dataclass(frozen=True)
class Delivery:
    """One notification on its way to one `[[notify]]` target."""

    id: int
    notification: Notification
    target: str
    """The target's URL."""
    state: DeliveryState
    attempts: int
    """Attempts started, the one in flight included."""
    next_at: str | None
    """Pending: when the next attempt is due; while claimed, when the claim lapses (a stamp)."""
    last_error: str | None
    delivered_at: str | None
    given_up_at: str | None


LOG_KINDS = (
    "run_started",
    "step_ready",
    "claimed",
    "renewed",
    "submission_refused",
    "submitted",
    "escalated",
    "returned",
    "decided",
    "check_verdict",
    "wait_started",
    "wait_ended",
    "event_received",
    "overdue",
    "timed_out",
    "rework",
    "cancelled",
    "ended",
)
"""Every kind of run log entry, in no particular order."""


@dataclass
class LogEntry:
    """One entry of a run's log: what happened to the run, when, by whom (None: the server).

    `seq` numbers the run's entries from 1; a repeat of the entry before it (another renewal,
    another refused submission by the same agent on the same step) carries the same `seq` and is
    added to that entry's `count`, its `detail` the latest. Never holds a token.
    """

    seq: int
    at: str
    """Server time, RFC 3339 as on the wire."""
    kind: str
    by: str | None
    step_id: str | None
    note: str | None
    count: int
    detail: dict[str, Any]

    def wire(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "kind": self.kind,
            "by": self.by,
            "stepId": self.step_id,
            "note": self.note,
            "count": self.count,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class AttemptResult:
    """What one attempt came to: `delivered`, `pending` again (retried at `retry_at`), or `given_up`."""

    state: Literal["delivered", "pending", "given_up"]
    at: str
    error: str | None = None
    retry_at: str | None = None


class Transaction(Protocol):
    """One write request's reads and writes; its reads see its own changes and those of every write
    acknowledged before it."""

    async def get_run(self, run_id: str) -> Run | None: ...
    def saved_rows(self, run_id: str) -> DerivedRows | None:
        """The index rows the store holds for the run, when it knows them without their being derived
        again from the run (those the write that saved it wrote); None: the caller derives them."""
        ...

    async def get_request(self, request_id: str) -> RequestRecord | None: ...
    async def token_owner(self, token_hash: str) -> tuple[str, str] | None:
        """The run and step a lease token from before signed tokens was issued for (`tools.leases`)."""
        ...

    async def insert_run(self, run: Run, derived: DerivedRows, input_keys: list[tuple[str, str]]) -> None: ...
    async def save_run(self, run: Run, derived: DerivedRows, before: DerivedRows | None = None) -> None: ...
    async def append_log(self, run_id: str, entries: Sequence[LogEntry]) -> None:
        """Add `entries` to the run's log in one statement; an entry whose `seq` is already there
        adds its count to that entry and replaces its detail. The oldest entries past the per-run
        cap give way (`engine.store.runlog`)."""
        ...

    async def save_request(self, record: RequestRecord) -> None: ...
    async def insert_version(self, record: VersionRecord) -> None: ...
    async def insert_file(self, record: FileRecord) -> None: ...
    async def add_notifications(
        self, notes: list[Notification], deliver_to: Callable[[str], Sequence[str]]
    ) -> None:
        """Record `notes`, each with a delivery to every target URL `deliver_to(kind)` names."""
        ...

    async def latest_version(self, name: str) -> VersionRecord | None: ...
    async def set_meta(self, key: str, value: str) -> None: ...
    async def delete_meta(self, key: str) -> None: ...
    async def advance_clock(self, at: str) -> None:
        """Record that server time `at` was issued: unless the mark recorded is at or after it already,
        the mark becomes `clock_mark(at)`, a little later (see `Store.server_time`)."""
        ...


class Store(Protocol):
    @property
    def read_only(self) -> bool:
        """True when opened read-only: `transaction` refuses, and reads compute what is due in memory."""
        ...

    async def close(self) -> None: ...
    async def write(self, fn: Callable[[Transaction], Awaitable[T]]) -> T:
        """Run `fn` as one write request and return what it returns, once its changes are durable.

        If `fn` raises, none of its changes are kept and the exception reaches the caller; other
        requests are unaffected. `fn` may be run more than once, so it has no effect outside `tx`
        except pure computation. Refused (RuntimeError) on a read-only store. A store shared by several
        servers runs it again after a `Conflict`; one that keeps losing raises `Conflict`."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Transaction]:
        """A write whose body is the `async with` block: for migrations and bulk seeding only (it
        holds the writer for as long as the block runs)."""
        ...

    async def listen(self, on_change: Callable[[list[str]], None], stop: asyncio.Event) -> None:
        """Until `stop` is set, call `on_change(run ids)` as other servers on the same database commit
        changes (`["*"]`: possibly any run). A store no other server writes to never calls it."""
        ...

    async def share_clock(self, at: datetime, speed: float) -> datetime | None:
        """Record that this server's clock shows `at` now, running at `speed`; return the latest time
        another live server at the same speed shows now, or None (no other server shares the store)."""
        ...

    async def get_meta(self, key: str) -> str | None: ...
    async def server_time(self) -> str | None:
        """The server time mark (a `stamp`): at or after every time a write issued, so a restart that
        resumes from it never goes back."""
        ...

    async def get_run(self, run_id: str) -> Run | None: ...
    async def run_log(self, run_id: str, after_seq: int, limit: int) -> list[LogEntry]:
        """The run's log entries with `seq` above `after_seq`, oldest first, at most `limit`."""
        ...

    async def get_runs(self, run_ids: list[str]) -> dict[str, Run]: ...
    async def get_request(self, request_id: str) -> RequestRecord | None: ...
    async def latest_version(self, name: str) -> VersionRecord | None: ...
    async def get_version(self, name: str, version: int) -> VersionRecord | None: ...
    async def list_latest_versions(self, after: str | None, limit: int) -> list[VersionRecord]: ...
    async def get_file(self, file_id: str) -> FileRecord | None: ...
    async def list_runs(
        self,
        process: str | None,
        state: str | None,
        inputs: list[tuple[str, str]],
        before_seq: int | None,
        limit: int,
    ) -> list[RunRow]: ...
    async def agent_work(
        self, now: str, process: str | None, after: tuple[str, int, int] | None, limit: int
    ) -> list[AgentWorkRow]: ...
    async def person_work(
        self,
        person: str,
        groups: list[str],
        process: str | None,
        after: tuple[str, int, int] | None,
        limit: int,
    ) -> list[PersonWorkRow]: ...
    async def due_runs(self, now: str) -> list[str]: ...
    async def notifications(self, run_id: str | None = None) -> list[Notification]: ...
    async def deliveries(self, run_id: str | None = None) -> list[Delivery]: ...
    async def claim_deliveries(self, owner: str, now: str, lease_until: str, limit: int) -> list[Delivery]:
        """Take up to `limit` pending deliveries due by `now` for `owner` until `lease_until`, each
        counted as an attempt. Several servers on one database never take the same one at once; one
        whose owner vanished is due again when its claim lapses."""
        ...

    async def record_attempt(self, delivery: Delivery, owner: str, result: AttemptResult) -> bool:
        """Record how the attempt of a claimed delivery ended; False if the claim was no longer this
        owner's (it lapsed and another server took it), and nothing changed."""
        ...

    async def counts(self) -> StoreCounts: ...
