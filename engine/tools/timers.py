"""Applying what is due: the one path the timer loop and every read take.

Timers (waits, wait_for timeouts, `due`, lease ends) are applied at their own due time with everything
they set off (`Machine.catch_up`), whenever the engine gets to them. The server's loop calls this twice
a second; `get_run`, `get_work` and `list_runs` call it before they read, so what a read shows is what
a write would find (spec §3.4: a snapshot from `get_run` is current) even on an engine that never
ticks. A store opened read-only is left as it is: the read tools catch up an in-memory copy instead
(`context.read_run`).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from engine.identity import Identity
from engine.store.base import Conflict, StoreUnavailable, Transaction
from engine.store.state import SERVER, Notification, parse_stamp, stamp
from engine.tools.context import Call, Context, loaded_rows, machine_for, save, write

log = logging.getLogger("engine.timers")


async def apply_due(ctx: Context, now: datetime) -> None:
    """Apply every timer due by `now`, one write request per run (all of them queued together, so
    they share commits); a run that fails is logged."""
    if ctx.store.read_only:
        return
    due = await ctx.store.due_runs(stamp(now))
    outcomes = await asyncio.gather(*(_catch_up(ctx, run_id, now) for run_id in due), return_exceptions=True)
    unavailable = False
    for run_id, outcome in zip(due, outcomes, strict=True):
        if isinstance(outcome, Conflict):
            log.debug("timer for run %s: another server is applying it", run_id)
        elif isinstance(outcome, StoreUnavailable):
            unavailable = True  # said once below, without a traceback: the next tick tries again
        elif isinstance(outcome, Exception):
            log.error("timer for run %s failed", run_id, exc_info=outcome)
        elif isinstance(outcome, BaseException):
            raise outcome
    if unavailable:
        log.warning("timers not applied: the database is unavailable")


async def _catch_up(ctx: Context, run_id: str, now: datetime) -> None:
    async def request(tx: Transaction, told: list[Notification]) -> None:
        run = await tx.get_run(run_id)
        if run is None or run.is_over:
            return
        machine = await machine_for(ctx, run, now)
        if not any(parse_stamp(at) <= now for at, _, _ in machine.timers()):
            return
        await tx.advance_clock(stamp(now))
        call = Call(Identity("agent", SERVER), now, tx, told=told)
        loaded_rows(call, machine)
        machine.catch_up()
        # No write of its own: the run was changed, and stamped, at each timer's due time.
        await save(call, machine, touch=False)

    await write(ctx, request)
