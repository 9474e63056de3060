"""The wire shape of `apc_run_log`, the run log our servers offer beside the fourteen tools
(engine/schemas/apc_run_log.result.json); another conforming server may not offer it."""

from __future__ import annotations

from typing import TypedDict

from console.client.wire import Json

RUN_LOG_TOOL = "apc_run_log"


class RunLogEntry(TypedDict):
    seq: int
    at: str
    kind: str
    by: str | None
    stepId: str | None
    note: str | None
    count: int
    detail: dict[str, Json]


class RunLog(TypedDict):
    runId: str
    entries: list[RunLogEntry]
    nextCursor: str | None
