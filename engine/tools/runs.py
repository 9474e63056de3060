"""Run-level writes: start_run, decide (spec §3.4), cancel (§3.5), send_event (§3.6)."""

from __future__ import annotations

import re
from typing import Any

from engine.document.fields import check_values
from engine.org import OPERATORS_GROUP
from engine.runtime.derive import derive
from engine.runtime.machine import Machine
from engine.store.records import copied
from engine.store.state import Run, data_bytes, run_data_bytes, snapshot_of
from engine.tools import checking
from engine.tools.acceptance import accept
from engine.tools.arguments import CancelArgs, DecideArgs, SendEventArgs, StartRunArgs
from engine.tools.context import Call, Context, canonical, notify, open_run, save
from engine.tools.errors import ToolError, conflict, first_error, forbidden, invalid, not_found, run_ended
from engine.tools.views import decisions

EVENT_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")


async def start_run(ctx: Context, call: Call, args: StartRunArgs) -> dict[str, Any]:
    found = await ctx.catalog.get(args.process, args.version, call.writes)
    if found is None:
        what = f"process '{args.process}'" + (f" version {args.version}" if args.version else "")
        raise not_found(what)
    record, process = found
    issues = [str(i) for i in check_values(process.inputs, args.inputs, "inputs")]
    if call.identity.is_agent:
        issues += [
            f"steps.{s.id}.person: initiator needs a person to start the run"
            for s in process.steps
            if s.person == "initiator"
        ]
    cap = ctx.org.server.run_data_bytes
    if (size := data_bytes({"inputs": args.inputs, "steps": {}})) > cap:
        issues.append(f"inputs: {size} bytes exceed limits.runDataBytes ({cap})")
    if issues:
        raise invalid("the run cannot start with these inputs", issues)
    run = Run(
        id=ctx.ids("r"),
        process=process.name,
        version=record.version,
        mode=args.mode,
        started_by=call.identity.id,
        started_at="",
        initiator=call.identity.id if call.identity.is_person else None,
        inputs=copied(args.inputs),  # kept with the run: the caller's value stays the caller's
    )
    m = Machine(run, process, call.now, ctx.org, record.bindings, ids=ctx.ids)
    m.start()
    keys = [(name, canonical(value)) for name, value in args.inputs.items()]
    await call.writes.insert_run(run, derive(m), keys)
    await call.writes.append_log(run.id, m.journal.entries)
    await notify(call, m)
    return ctx.views.run_view(run, process)


async def cancel(ctx: Context, call: Call, args: CancelArgs) -> dict[str, Any]:
    m = await open_run(ctx, call, args.runId)
    first_error(
        {
            "run_ended": lambda: run_ended() if m.run.is_over else None,
            "forbidden": lambda: (
                None if ctx.org.is_operator(call.identity) else forbidden("cancel is for operators")
            ),
        }
    )
    if not args.reason.strip():
        raise invalid("a cancellation needs a reason", ["reason: required"])
    m.end("cancelled", None, call.identity.id, args.reason)
    await save(call, m)
    return ctx.views.run_view(m.run, m.process)


async def decide(ctx: Context, call: Call, args: DecideArgs) -> dict[str, Any]:
    m = await open_run(ctx, call, args.runId)
    run = m.run
    item = run.work_items.get(args.workItemId)
    first_error(
        {
            "run_ended": lambda: run_ended() if run.is_over else None,
            "already_decided": lambda: (
                conflict("the work item was already decided", "already_decided")
                if item is None and args.workItemId in run.item_ids
                else None
            ),
            "not_found": lambda: not_found(f"work item '{args.workItemId}'") if item is None else None,
            "stale": lambda: (
                None
                if args.snapshot == snapshot_of(run)
                else ToolError("stale", "the run data changed since this snapshot; read the run again")
            ),
            "forbidden": lambda: None if item is None else _may_decide(ctx, call, item.assigned_to),
        }
    )
    assert item is not None
    _check_decision(args, decisions(item))
    by, step_id = call.identity.id, item.step_id

    def decided() -> None:
        note = args.summary if args.decision == "completed" else args.note
        m.log("decided", step_id, by=by, note=note, decision=args.decision, workItem=item.id)

    if args.decision != "completed" and args.decision != "returned":
        decided()
    if args.decision == "approved":
        m.approve(step_id, by, args.note)
    elif args.decision == "rejected":
        m.reject(step_id, by, args.note or "")
    elif args.decision == "failed":
        m.fail(step_id, by, args.note or "")
    elif args.decision == "returned":
        m.give_back(step_id, by, args.note or "")
    else:
        step = m.process.step(step_id)
        escalation = run.steps[step_id].escalation if item.escalated else None
        sub = checking.person_submission(args, escalation)
        issues, fields = await accept(ctx.files, run, step, sub, by, m.at, ctx.org.server.run_data_bytes)
        if issues:
            raise ToolError("not_accepted", "the decision was not accepted", issues)
        if item.escalated:
            decided()
            m.complete(step_id, checking.held_fields(fields, escalation), sub.next)
        else:
            key = ("decide", run.id, item.id, args.snapshot)
            await checking.finish(call, m, step, fields, sub.next, key, decided)
    await save(call, m)
    return ctx.views.run_view(run, m.process)


COMPLETED_ONLY = ("output", "evidence", "summary", "next", "reason")


def _check_decision(args: DecideArgs, allowed: list[str]) -> None:
    """tools.md `decide`: the decision must be one the item takes, with the fields that decision takes.

    Rules, not schema (the argument schema states none of them), so they come after `run_ended` and
    the other checks in `PRECEDENCE`, all issues at once, before the submission itself is judged.
    """
    issues: list[str] = []
    message = f"the fields do not fit decision {args.decision}"
    if args.decision not in allowed:
        message = f"{args.decision} is not a decision on this work item"
        issues.append(f"decision: {args.decision} not allowed here, one of {', '.join(allowed)}")
    if args.decision != "completed":
        issues += [
            f"{name}: not taken by decision {args.decision}"
            for name in COMPLETED_ONLY
            if getattr(args, name) is not None
        ]
    elif args.note is not None:
        issues.append("note: not taken by decision completed")
    if args.decision in ("rejected", "returned", "failed") and not (args.note or "").strip():
        issues.append(f"note: required for decision {args.decision}")
    if issues:
        raise invalid(message, issues)


def _may_decide(ctx: Context, call: Call, assigned_to: dict[str, str]) -> ToolError | None:
    """Spec §6 rule 4: only a person decides, and only one the item is assigned to."""
    identity = call.identity
    if not identity.is_person:
        return forbidden("only a person decides")
    if "person" in assigned_to:
        ok = assigned_to["person"] == identity.id
    elif assigned_to["group"] == OPERATORS_GROUP:
        ok = ctx.org.is_operator(identity)
    else:
        ok = assigned_to["group"] in ctx.org.groups_of(identity)
    return None if ok else forbidden("this work item is assigned to someone else")


async def send_event(ctx: Context, call: Call, args: SendEventArgs) -> dict[str, Any]:
    m = await open_run(ctx, call, args.runId)
    first_error(
        {
            "run_ended": lambda: run_ended() if m.run.is_over else None,
            "forbidden": lambda: (
                None
                if call.identity.is_agent or ctx.org.is_operator(call.identity)
                else forbidden("send_event is for agents and operators")
            ),
        }
    )
    if not EVENT_NAME.fullmatch(args.name):
        raise invalid("not an event name", ["name: must match ^[a-z][a-z0-9_-]{0,63}$"])
    data = copied(args.data or {})
    cap = ctx.org.server.run_data_bytes
    held = [{"name": e.name, "data": e.data} for e in m.run.events]
    size = run_data_bytes(m.run) + data_bytes(held) + data_bytes(data)
    if size > cap:  # `invalid`, as inputs over the cap are: the call's data, not a submission of work
        raise invalid(
            "the event is too large", [f"data: {size} bytes would exceed limits.runDataBytes ({cap})"]
        )
    consumed = m.deliver(args.name, data, call.identity.id)
    await save(call, m)
    return {"consumedBy": consumed}
