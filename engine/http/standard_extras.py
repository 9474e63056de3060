"""The extra tools `apc serve` and the embedded endpoint always offer, beside the fourteen (extra.py).

One list, so every server of ours offers the same ones; a demo adds its own after them.
"""

from __future__ import annotations

from typing import Any, Protocol

from engine.http.extra import ExtraTool
from engine.http.whoami import whoami_tool
from engine.identity import Identity
from engine.tools.arguments import RunLogArgs
from engine.tools.run_log import TOOL as RUN_LOG
from engine.tools.run_log import result_schema


class LogEngine(Protocol):
    async def run_log(self, identity: Identity, arguments: dict[str, Any]) -> dict[str, Any]: ...


def everyone(identity: Identity) -> bool:
    """Every authenticated identity: the ones `get_run` answers (it reads any run for any caller)."""
    return True


def run_log_tool(engine: LogEngine) -> ExtraTool:
    return ExtraTool(
        name=RUN_LOG,
        title="Run log",
        description=(
            "Everything that happened to a run, oldest first: started, steps ready, claims, renewals, "
            "refused and accepted submissions, escalations, decisions, check verdicts, waits, events, "
            "overdue, timeouts, rework, cancel, end. Paged by cursor. Offered beside the protocol's tools."
        ),
        input_schema=RunLogArgs.model_json_schema(),
        data_schema=result_schema(),
        handler=engine.run_log,
        may_call=everyone,
        read_only=True,
    )


def standard_extras(engine: LogEngine) -> list[ExtraTool]:
    """The extra tools every server of ours offers."""
    return [run_log_tool(engine), whoami_tool()]
