"""What every tool handler works with: the engine's parts, the caller, and the moment of the call."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import rfc8785

from engine.clock import Clock
from engine.document.model import Process
from engine.evaluator import CheckLimits, Evaluator, Verdict
from engine.files import Files
from engine.identity import Identity
from engine.ids import IdSource, new_id
from engine.org import OrgConfig
from engine.runtime.derive import derive
from engine.runtime.machine import Machine
from engine.store.base import DerivedRows, Store, Transaction, VersionRecord
from engine.store.state import Notification, Run
from engine.tools.catalog import Catalog
from engine.tools.cursors import Cursors
from engine.tools.errors import not_found
from engine.tools.leases import Leases
from engine.tools.replays import Replays
from engine.tools.told import Told
from engine.tools.views import Views

T = TypeVar("T")


@dataclass
class Context:
    store: Store
    org: OrgConfig
    clock: Clock
    files: Files
    catalog: Catalog
    views: Views
    cursors: Cursors
    replays: Replays
    leases: Leases
    tools: tuple[str, ...]
    profiles: tuple[str, ...]
    evaluator: Evaluator | None = None
    """None: no evaluator configured, so `check-1` is not offered."""
    check_limits: CheckLimits = field(default_factory=CheckLimits)
    ids: IdSource = new_id
    """Where run, work item and file ids come from."""
    told: Told = field(default_factory=Told)
    """Who the writes of this engine told of something, once durable (`Call.told`)."""


@dataclass(frozen=True)
class Checked:
    """A verdict reached outside the write lock, and the submission it is for (see `tools.checking`)."""

    key: tuple[str, ...]
    verdict: Verdict


@dataclass
class Call:
    identity: Identity
    now: datetime
    tx: Transaction | None = None
    """Set for write tools: the one transaction the call runs in."""
    loaded: dict[str, DerivedRows] = field(default_factory=dict)
    """Index rows of each run as loaded, so a save rewrites only the tables that changed."""
    checked: Checked | None = None
    """Set when the dispatcher repeats a write after running the check it asked for."""
    told: list[Notification] = field(default_factory=list)
    """What the call's write tells people (`notify`): the list `write` hands the request, counted in
    `Context.told` once the write is durable."""

    @property
    def writes(self) -> Transaction:
        if self.tx is None:
            raise RuntimeError("a read tool tried to write")
        return self.tx


async def open_run(ctx: Context, call: Call, run_id: str) -> Machine:
    """The run inside the write's transaction, with every timer due by now applied."""
    run = await call.writes.get_run(run_id)
    if run is None:
        raise not_found(f"run '{run_id}'")
    machine = await machine_for(ctx, run, call.now)
    loaded_rows(call, machine)
    machine.catch_up()
    return machine


def loaded_rows(call: Call, machine: Machine) -> None:
    """Keep the index rows of the run as loaded (before any change), for `save` to write the difference."""
    rows = call.writes.saved_rows(machine.run.id)
    call.loaded[machine.run.id] = derive(machine) if rows is None else rows


async def machine_for(ctx: Context, run: Run, now: datetime) -> Machine:
    record, process = await pinned(ctx, run.process, run.version)
    return Machine(run, process, now, ctx.org, record.bindings, ids=ctx.ids)


async def pinned(ctx: Context, name: str, version: int) -> tuple[VersionRecord, Process]:
    found = await ctx.catalog.get(name, version)
    if found is None:
        raise RuntimeError(f"run pins a missing version {name} v{version}")
    return found


async def read_run(ctx: Context, run_id: str, now: datetime) -> tuple[Run, Process]:
    """A run as a read shows it: as of `now`, every timer due by then applied.

    On a writable store the reads applied them first (`timers.apply_due`), so this changes nothing;
    on a read-only store it is the caught-up view, computed in memory and never written.
    """
    run = await ctx.store.get_run(run_id)
    if run is None:
        raise not_found(f"run '{run_id}'")
    machine = await machine_for(ctx, run, now)
    machine.catch_up()
    return run, machine.process


async def read_runs(ctx: Context, run_ids: list[str], now: datetime) -> dict[str, tuple[Run, Process]]:
    """Several runs as `read_run` shows them, fetched together; runs gone since the index read are absent."""
    out: dict[str, tuple[Run, Process]] = {}
    for run_id, run in (await ctx.store.get_runs(sorted(set(run_ids)))).items():
        machine = await machine_for(ctx, run, now)
        machine.catch_up()
        out[run_id] = (run, machine.process)
    return out


async def save(call: Call, machine: Machine, *, touch: bool = True) -> None:
    """Write the run back; `touch` stamps the write's own time as `updatedAt`. A renew and a refused
    submission do not; a tick leaves the due times `catch_up` stamped."""
    if touch:
        machine.settle()
    await call.writes.save_run(machine.run, derive(machine), call.loaded.get(machine.run.id))
    if machine.journal.entries:
        await call.writes.append_log(machine.run.id, machine.journal.entries)
    await notify(call, machine)


async def write(ctx: Context, request: Callable[[Transaction, list[Notification]], Awaitable[T]]) -> T:
    """Run `request` as one write request of the store. It gets a list to hand its `Call` (`Call.told`):
    what its last pass told people counts in `Context.told` once the write is durable (a store may run a
    request more than once; one that raises counts nothing)."""
    told: list[Notification] = []

    async def attempt(tx: Transaction) -> T:
        told.clear()
        return await request(tx, told)

    result = await ctx.store.write(attempt)
    ctx.told.heard(told)
    return result


async def notify(call: Call, machine: Machine) -> None:
    """What the machine tells people, into the call's write (the outbox) and `Call.told`."""
    if machine.notifications:
        await call.writes.add_notifications(machine.notifications, machine.org.notify_urls)
        call.told.extend(machine.notifications)


def canonical(value: Any) -> str:
    """One text per JSON value, so `1` and `1.0` compare equal in `list_runs` input filters."""
    try:
        return rfc8785.dumps(value).decode()
    except (rfc8785.IntegerDomainError, rfc8785.FloatDomainError, TypeError, ValueError):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
