"""One entry point for every tool call: argument checking, idempotency, the write transaction, errors.

Order for every call: arguments (`invalid`), then for writes a replay of the same `requestId`, then the
tool's own rules in `errors.PRECEDENCE` order. A write is one write request of the store
(`Store.write`): the replay lookup, the tool and its idempotency record run together and are kept
together, one request after another, so concurrent writes to a run are resolved here, not by the
client (spec §6, housekeeping rule). A write whose submission needs a check runs twice, with the
evaluator asked in between, outside any write (`tools.checking` says why and what the second pass
checks again).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from engine.identity import Identity
from engine.store.base import Conflict, RequestRecord, StoreUnavailable, Transaction
from engine.store.state import Notification, stamp
from engine.tools import agent, checking, fingerprints, reads, runs, timers
from engine.tools.arguments import ARGUMENTS, issues_of, unreadable
from engine.tools.context import Call, Checked, Context, write
from engine.tools.errors import ToolError, conflict, invalid
from engine.tools.fingerprints import Fingerprint

log = logging.getLogger("engine.tools")

Handler = Callable[[Context, Call, Any], Awaitable[Any]]

READS: dict[str, Handler] = {
    "describe": reads.describe,
    "list_processes": reads.list_processes,
    "get_run": reads.get_run,
    "get_work": reads.get_work,
    "list_runs": reads.list_runs,
}
WRITES: dict[str, Handler] = {
    "start_run": runs.start_run,
    "claim": agent.claim,
    "renew": agent.renew,
    "upload": agent.upload,
    "submit": agent.submit,
    "escalate": agent.escalate,
    "decide": runs.decide,
    "cancel": runs.cancel,
    "send_event": runs.send_event,
}

TOOL_ORDER = (
    "describe",
    "list_processes",
    "start_run",
    "get_run",
    "get_work",
    "claim",
    "renew",
    "upload",
    "submit",
    "escalate",
    "decide",
    "cancel",
    "send_event",
    "list_runs",
)


AS_OF_NOW = frozenset({"get_run", "get_work", "list_runs"})
"""Reads that show runs: what is due is applied before they read (`timers`)."""


class Dispatcher:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def apply_due(self, now: datetime) -> None:
        """Apply every timer due by `now` (the timer loop, and every read of runs)."""
        await timers.apply_due(self.ctx, now)

    async def call(self, identity: Identity, tool: str, arguments: Any) -> dict[str, Any]:
        try:
            return {"ok": True, "data": await self._call(identity, tool, arguments)}
        except ToolError as err:
            return err.wire()
        except (StoreUnavailable, Conflict) as exc:
            log.warning("tool %s: %s", tool, exc)
            return ToolError("retry", "the store is busy or unavailable; try again shortly").wire()
        except Exception:
            log.exception("tool %s failed", tool)
            return {"ok": False, "error": {"code": "retry", "message": "internal error"}}

    async def _call(self, identity: Identity, tool: str, arguments: Any) -> Any:
        if tool not in self.ctx.tools:
            raise invalid(f"unknown tool '{tool}'", [f"tool: one of {', '.join(self.ctx.tools)}"])
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise invalid("arguments must be an object", ["arguments: expected object"])
        # A write's fingerprint is its arguments as JSON text: made, it says they are readable too.
        made = fingerprints.of(tool, arguments) if tool in WRITES else None
        if made is None and (problems := unreadable(arguments)):
            raise invalid("the arguments hold values JSON cannot carry", problems)
        try:
            args = ARGUMENTS[tool].model_validate(arguments)
        except ValidationError as exc:
            raise invalid("the arguments do not match the tool's schema", issues_of(exc)) from None
        if tool in READS:
            now = self.ctx.clock.now()
            if tool in AS_OF_NOW:
                await self.apply_due(now)
            return await READS[tool](self.ctx, Call(identity, now), args)
        if made is None:  # readable, yet not as canonical JSON (keys that do not sort): say why
            made = fingerprints.of(tool, arguments, strict=True)
        assert made is not None
        return await self._write(identity, tool, args, made)

    async def _write(self, identity: Identity, tool: str, args: BaseModel, fingerprint: Fingerprint) -> Any:
        request_id: str = args.requestId  # type: ignore[attr-defined]
        checked: Checked | None = None
        while True:
            try:
                return await self._write_once(identity, tool, args, request_id, fingerprint, checked)
            except checking.CheckNeeded as need:
                if checked is not None:
                    raise RuntimeError(f"{tool} asked for a second check") from None
                checked = await checking.evaluate(self.ctx, need)

    async def _write_once(
        self,
        identity: Identity,
        tool: str,
        args: BaseModel,
        request_id: str,
        fingerprint: Fingerprint,
        checked: Checked | None,
    ) -> Any:
        """One pass of a write as one write request; `CheckNeeded` leaves it with nothing written."""

        async def request(tx: Transaction, told: list[Notification]) -> tuple[Any, ToolError | None]:
            earlier = await tx.get_request(request_id)
            if earlier is not None:
                return self._replay(earlier, identity, tool, fingerprint), None
            call = Call(identity, self.ctx.clock.now(), tx, checked=checked, told=told)
            await tx.advance_clock(stamp(call.now))
            try:
                result = await WRITES[tool](self.ctx, call, args)
            except ToolError as err:
                if not err.keep:
                    raise
                return None, err  # what the tool changed is kept, and the caller still hears the error
            recorded = self.ctx.replays.seal(request_id, identity.id, tool, result)
            await tx.save_request(RequestRecord(request_id, identity.id, tool, fingerprint.digest, recorded))
            return result, None

        result, kept = await write(self.ctx, request)
        if kept is not None:
            raise kept
        return result

    def _replay(self, earlier: RequestRecord, identity: Identity, tool: str, fingerprint: Fingerprint) -> Any:
        """The recorded result of an earlier call with this requestId, if it was this same call."""
        same = (earlier.identity, earlier.tool) == (identity.id, tool) and fingerprint.matches(
            earlier.args_hash
        )
        if not same:
            raise conflict("this requestId was already used with other arguments", "requestId: already used")
        readable, result = self.ctx.replays.open(earlier.request_id, identity.id, tool, earlier.result)
        if not readable:
            raise conflict(
                "this requestId was already used, and its result cannot be read back "
                "(the server's secrets file changed); make a new call",
                "requestId: already used",
            )
        return result
