"""The read tools: describe, list_processes, get_run, list_runs, get_work. None of them writes.

The dispatcher applies what is due before the three that show runs (`timers`), so they read runs as of
now. On a read-only store they compute that in memory: `get_run` exactly; `get_work` and `list_runs`
page through the store's indexes as they are and show each listed run caught up.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from engine.org import OPERATORS_GROUP
from engine.store.base import RunRow
from engine.store.state import snapshot_of, stamp
from engine.tools.arguments import DescribeArgs, GetRunArgs, GetWorkArgs, ListProcessesArgs, ListRunsArgs
from engine.tools.context import Call, Context, canonical, read_run, read_runs
from engine.tools.cursors import Read
from engine.tools.errors import forbidden
from engine.tools.views import agent_work_item, run_summary

PROCESS_PAGE = 50


async def describe(ctx: Context, call: Call, args: DescribeArgs) -> dict[str, Any]:
    server = ctx.org.server
    return {
        "protocol": "agentprocess",
        "version": "core-2",
        "profiles": list(ctx.profiles),
        "leaseSeconds": server.lease_seconds,
        "person": {"format": "email"},
        "tools": list(ctx.tools),
        "maxUploadBytes": server.max_upload_bytes,
        "limits": {"runDataBytes": server.run_data_bytes, **ctx.check_limits.wire()},
    }


async def list_processes(ctx: Context, call: Call, args: ListProcessesArgs) -> dict[str, Any]:
    after = ctx.cursors.decode("list_processes", args.cursor, (str,))[0] if args.cursor is not None else None
    records = await ctx.store.list_latest_versions(after, PROCESS_PAGE + 1)
    items = []
    for record in records[:PROCESS_PAGE]:
        item: dict[str, Any] = {
            "name": record.name,
            "description": record.description,
            "version": record.version,
            "inputs": record.inputs,
        }
        if record.requires is not None:
            item["requires"] = record.requires
        items.append(item)
    more = len(records) > PROCESS_PAGE
    cursor = ctx.cursors.encode("list_processes", [items[-1]["name"]]) if more else None
    return {"items": items, "nextCursor": cursor}


async def get_run(ctx: Context, call: Call, args: GetRunArgs) -> dict[str, Any]:
    run, process = await read_run(ctx, args.runId, call.now)
    return ctx.views.run_view(run, process)


async def list_runs(ctx: Context, call: Call, args: ListRunsArgs) -> dict[str, Any]:
    before = ctx.cursors.decode("list_runs", args.cursor, (int,))[0] if args.cursor is not None else None
    filters = [(name, canonical(value)) for name, value in sorted((args.inputs or {}).items())]
    rows = await ctx.store.list_runs(args.process, args.state, filters, before, args.limit + 1)
    page = rows[: args.limit]
    more = len(rows) > args.limit
    cursor = ctx.cursors.encode("list_runs", [page[-1].seq]) if more else None
    if ctx.store.read_only:
        page = await _as_of_now(ctx, page, call.now, args.state)
    return {"items": [run_summary(row) for row in page], "nextCursor": cursor}


async def _as_of_now(ctx: Context, page: list[RunRow], now: datetime, state: str | None) -> list[RunRow]:
    """A read-only store's rows, with the runs a due timer changed shown as caught up in memory.

    The index cannot be rewritten there, so a run a timer moved into the `state` asked for shows up
    only once a writable server has applied the timer; one it moved out of that state is left out.
    """
    due = set(await ctx.store.due_runs(stamp(now))) & {row.id for row in page}
    if not due:
        return page
    runs = await read_runs(ctx, sorted(due), now)
    out: list[RunRow] = []
    for row in page:
        if row.id in runs:
            run = runs[row.id][0]
            row = replace(row, state=run.state, outcome=run.outcome, updated_at=run.updated_at)
        if state is None or row.state == state:
            out.append(row)
    return out


async def get_work(ctx: Context, call: Call, args: GetWorkArgs) -> dict[str, Any]:
    if call.identity.is_agent:
        return await _agent_work(ctx, call, args)
    return await _person_work(ctx, call, args)


def _work_cursor(ctx: Context, read: Read, cursor: str | None) -> tuple[str, int, int] | None:
    """The (time, run, index) position a `get_work` page ended at, from the cursor that ended it."""
    if cursor is None:
        return None
    at, run_seq, index = ctx.cursors.decode(read, cursor, (str, int, int))
    return at, run_seq, index


async def _agent_work(ctx: Context, call: Call, args: GetWorkArgs) -> dict[str, Any]:
    after = _work_cursor(ctx, "agent_work", args.cursor)
    rows = await ctx.store.agent_work(stamp(call.now), args.process, after, args.limit + 1)
    runs = await read_runs(ctx, [row.run_id for row in rows[: args.limit]], call.now)
    items = []
    for row in rows[: args.limit]:
        run = runs[row.run_id][0] if row.run_id in runs else None
        if run is not None and run.steps[row.step_id].state == "ready":
            items.append(agent_work_item(run, row.step_id))
    more = len(rows) > args.limit
    last = rows[args.limit - 1] if more else None
    cursor = (
        ctx.cursors.encode("agent_work", [last.available_at, last.run_seq, last.step_index]) if last else None
    )
    return {"items": items, "nextCursor": cursor}


async def _person_work(ctx: Context, call: Call, args: GetWorkArgs) -> dict[str, Any]:
    if not call.identity.is_person:
        raise forbidden("get_work is for agents and people")
    groups = ctx.org.groups_of(call.identity)
    after = _work_cursor(ctx, "person_work", args.cursor)
    rows = await ctx.store.person_work(call.identity.id, groups, args.process, after, args.limit + 1)
    runs = await read_runs(ctx, [row.run_id for row in rows[: args.limit]], call.now)
    items = []
    for row in rows[: args.limit]:
        if row.run_id not in runs:
            continue
        run, process = runs[row.run_id]
        item = run.work_items.get(row.item_id)
        if item is None or (
            item.assigned_to.get("group") == OPERATORS_GROUP and OPERATORS_GROUP not in groups
        ):
            continue
        items.append(
            {
                "runId": run.id,
                "process": run.process,
                "version": run.version,
                "mode": run.mode,
                "workItem": ctx.views.work_item(run, process, item, snapshot_of(run)),
            }
        )
    more = len(rows) > args.limit
    last = rows[args.limit - 1] if more else None
    cursor = (
        ctx.cursors.encode("person_work", [last.created_at, last.run_seq, last.item_seq]) if last else None
    )
    return {"items": items, "nextCursor": cursor}
