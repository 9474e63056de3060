"""`apc_run_log`: a run's log, paged oldest first (the entries are written by `runtime.journal`).

An extra read the server offers beside the fourteen, to every identity that may read the run with
`get_run`. Its result shape is the project's own schema, `engine/schemas/apc_run_log.result.json`.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from pydantic import ValidationError

from engine.identity import Identity
from engine.tools.arguments import RunLogArgs, issues_of, unreadable
from engine.tools.context import Context
from engine.tools.errors import ToolError, invalid, not_found

TOOL = "apc_run_log"
PAGE = 100


def result_schema() -> dict[str, Any]:
    """The JSON Schema of the tool's `data`."""
    text = resources.files("engine.schemas").joinpath("apc_run_log.result.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


async def run_log(ctx: Context, identity: Identity, arguments: Any) -> dict[str, Any]:
    """The tool's answer as an envelope, like any tool's."""
    try:
        return {"ok": True, "data": await _read(ctx, arguments)}
    except ToolError as err:
        return err.wire()


async def _read(ctx: Context, arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        raise invalid("arguments must be an object", ["arguments: expected object"])
    if problems := unreadable(arguments):
        raise invalid("the arguments hold values JSON cannot carry", problems)
    try:
        args = RunLogArgs.model_validate(arguments)
    except ValidationError as exc:
        raise invalid("the arguments do not match the tool's schema", issues_of(exc)) from None
    after = 0
    if args.cursor is not None:
        run_id, after = ctx.cursors.decode("run_log", args.cursor, (str, int))
        if run_id != args.runId:
            raise invalid("the cursor is for another run", ["cursor: not valid"])
    if await ctx.store.get_run(args.runId) is None:
        raise not_found(f"run '{args.runId}'")
    limit = args.limit or PAGE
    entries = await ctx.store.run_log(args.runId, after, limit + 1)
    page = entries[:limit]
    more = len(entries) > limit
    cursor = ctx.cursors.encode("run_log", [args.runId, page[-1].seq]) if more else None
    return {"runId": args.runId, "entries": [e.wire() for e in page], "nextCursor": cursor}
