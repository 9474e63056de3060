"""The console's only door to a server: the fourteen tools, each answering with the wire envelope.

Every screen talks to a `Client`, so the same console works in-process, over MCP, or against a fake.
Errors stay values (`{ok: false, error}`), exactly as the server sent them, so the console can show
each issue verbatim. Each tool answers with the envelope of its result schema (`wire.py`).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, TypeVar, cast, runtime_checkable

from console.client.files import FetchedFile, Progress, fetch_url
from console.client.run_log import RUN_LOG_TOOL, RunLog
from console.client.wire import (
    CancelResult,
    ClaimResult,
    DecideArguments,
    DecideResult,
    DescribeResult,
    Envelope,
    EscalateResult,
    EvidenceItem,
    Failure,
    GetRunResult,
    GetWorkResult,
    Json,
    ListProcessesResult,
    ListRunsResult,
    RenewResult,
    RunMode,
    RunState,
    SendEventResult,
    StartRunResult,
    SubmitResult,
    UploadResult,
)
from engine.document.model import Process
from engine.identity import Identity
from engine.tools.catalog import PublishResult

RequestIds = Callable[[], str]
T = TypeVar("T")


@dataclass(frozen=True)
class Capabilities:
    """What this connection offers beyond the protocol. Only the embedded engine offers any."""

    publish: bool = False
    switch_identity: bool = False
    process_document: bool = False
    """A published version's document, which the process map and the body are drawn from."""
    presenter: bool = False
    """Presenter controls of a live demo (the session brings them, not the client)."""


@dataclass(frozen=True)
class Who:
    """Who the connection acts as: `apc_whoami`'s answer, or what the token says when a server lacks it."""

    kind: Literal["person", "agent"]
    id: str
    email: str | None
    operator: bool
    confirmed: bool = True
    """False when guessed from the token (another server): then `operator` is not known, only False."""

    @classmethod
    def of(cls, identity: Identity) -> Who:
        email = identity.id if identity.is_person else None
        return cls(identity.kind, identity.id, email, identity.is_person and identity.operator)

    def identity(self) -> Identity:
        return Identity(self.kind, self.email or self.id, self.operator)


@runtime_checkable
class Client(Protocol):
    identity: Identity
    capabilities: Capabilities

    async def describe(self) -> Envelope[DescribeResult]: ...
    async def list_processes(self, cursor: str | None = None) -> Envelope[ListProcessesResult]: ...
    async def start_run(
        self,
        process: str,
        inputs: dict[str, Json],
        *,
        version: int | None = None,
        mode: RunMode | None = None,
    ) -> Envelope[StartRunResult]: ...
    async def get_run(self, run_id: str) -> Envelope[GetRunResult]: ...
    async def get_work(
        self, *, limit: int | None = None, cursor: str | None = None, process: str | None = None
    ) -> Envelope[GetWorkResult]: ...
    async def claim(self, run_id: str, step_id: str) -> Envelope[ClaimResult]: ...
    async def renew(self, token: str, progress: str | None = None) -> Envelope[RenewResult]: ...
    async def upload(self, file_name: str, content_type: str, content: bytes) -> Envelope[UploadResult]: ...
    async def submit(
        self,
        token: str,
        output: dict[str, Json],
        summary: str,
        *,
        evidence: list[EvidenceItem] | None = None,
        next: str | None = None,
        reason: str | None = None,
    ) -> Envelope[SubmitResult]: ...
    async def escalate(self, token: str, note: str) -> Envelope[EscalateResult]: ...
    async def decide(self, arguments: DecideArguments) -> Envelope[DecideResult]: ...
    async def cancel(self, run_id: str, reason: str) -> Envelope[CancelResult]: ...
    async def send_event(
        self, run_id: str, name: str, data: dict[str, Json] | None = None
    ) -> Envelope[SendEventResult]: ...
    async def list_runs(
        self,
        *,
        process: str | None = None,
        state: RunState | None = None,
        inputs: dict[str, Json] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Envelope[ListRunsResult]: ...
    async def fetch_file(self, url: str, progress: Progress | None = None) -> FetchedFile | Failure: ...
    async def whoami(self) -> Who: ...
    async def extra_tools(self) -> frozenset[str]:
        """The tools the server offers beyond the fourteen (a remote client opens its session to ask)."""
        ...

    async def run_log(
        self, run_id: str, cursor: str | None = None, limit: int | None = None
    ) -> Envelope[RunLog] | None:
        """The run's log (`apc_run_log`); None when the server does not offer it."""
        ...

    async def close(self) -> None: ...

    async def publish(self, source: Path, bind: dict[str, str] | None = None) -> PublishResult: ...
    def people(self) -> list[Identity]: ...
    def switch_identity(self, identity: Identity) -> None: ...
    async def process_document(self, name: str, version: int) -> Process | None: ...


def _compact(arguments: dict[str, object]) -> dict[str, object]:
    """Optional arguments the caller left out are omitted, never sent as null."""
    return {key: value for key, value in arguments.items() if value is not None}


class ToolClient:
    """The fourteen tools as methods over one `call(tool, arguments)`; transports implement `call`."""

    identity: Identity
    capabilities: Capabilities = Capabilities()

    def __init__(self, identity: Identity, *, request_ids: RequestIds | None = None) -> None:
        self.identity = identity
        self._request_ids = request_ids or (lambda: str(uuid.uuid4()))

    async def call(self, tool: str, arguments: dict[str, object]) -> object:
        """One tool call, answered with the envelope as the transport decoded it from JSON (not typed
        yet: `_read` gives it its type)."""
        raise NotImplementedError

    async def _read(self, tool: str, arguments: dict[str, object]) -> Envelope[T]:
        """`call`, its answer taken as the envelope of the result the tool's method declares.

        This is where the console takes the wire on trust: a conforming server's answers have the shapes
        of its tools' result schemas, and checking every answer against the schemas on every refresh
        would cost more than the screen it feeds.
        """
        return cast("Envelope[T]", await self.call(tool, arguments))

    async def _write(self, tool: str, arguments: dict[str, object]) -> Envelope[T]:
        if "requestId" not in arguments:
            arguments = {**arguments, "requestId": self._request_ids()}
        return await self._read(tool, _compact(arguments))

    async def describe(self) -> Envelope[DescribeResult]:
        return await self._read("describe", {})

    async def list_processes(self, cursor: str | None = None) -> Envelope[ListProcessesResult]:
        return await self._read("list_processes", _compact({"cursor": cursor}))

    async def start_run(
        self,
        process: str,
        inputs: dict[str, Json],
        *,
        version: int | None = None,
        mode: RunMode | None = None,
    ) -> Envelope[StartRunResult]:
        return await self._write(
            "start_run", {"process": process, "version": version, "inputs": inputs, "mode": mode}
        )

    async def get_run(self, run_id: str) -> Envelope[GetRunResult]:
        return await self._read("get_run", {"runId": run_id})

    async def get_work(
        self, *, limit: int | None = None, cursor: str | None = None, process: str | None = None
    ) -> Envelope[GetWorkResult]:
        return await self._read("get_work", _compact({"limit": limit, "cursor": cursor, "process": process}))

    async def claim(self, run_id: str, step_id: str) -> Envelope[ClaimResult]:
        return await self._write("claim", {"runId": run_id, "stepId": step_id})

    async def renew(self, token: str, progress: str | None = None) -> Envelope[RenewResult]:
        return await self._write("renew", {"token": token, "progress": progress})

    async def upload(self, file_name: str, content_type: str, content: bytes) -> Envelope[UploadResult]:
        encoded = base64.b64encode(content).decode("ascii")
        return await self._write(
            "upload", {"fileName": file_name, "contentType": content_type, "contentBase64": encoded}
        )

    async def submit(
        self,
        token: str,
        output: dict[str, Json],
        summary: str,
        *,
        evidence: list[EvidenceItem] | None = None,
        next: str | None = None,
        reason: str | None = None,
    ) -> Envelope[SubmitResult]:
        return await self._write(
            "submit",
            {
                "token": token,
                "output": output,
                "evidence": evidence,
                "summary": summary,
                "next": next,
                "reason": reason,
            },
        )

    async def escalate(self, token: str, note: str) -> Envelope[EscalateResult]:
        return await self._write("escalate", {"token": token, "note": note})

    async def decide(self, arguments: DecideArguments) -> Envelope[DecideResult]:
        """`arguments` is the work item's `decide.arguments` plus the decision and what it requires.

        The placeholder `requestId` the server puts in the prepared call is replaced by a fresh one.
        """
        prepared = {key: value for key, value in arguments.items() if key != "requestId"}
        return await self._write("decide", prepared)

    async def cancel(self, run_id: str, reason: str) -> Envelope[CancelResult]:
        return await self._write("cancel", {"runId": run_id, "reason": reason})

    async def send_event(
        self, run_id: str, name: str, data: dict[str, Json] | None = None
    ) -> Envelope[SendEventResult]:
        return await self._write("send_event", {"runId": run_id, "name": name, "data": data})

    async def list_runs(
        self,
        *,
        process: str | None = None,
        state: RunState | None = None,
        inputs: dict[str, Json] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Envelope[ListRunsResult]:
        return await self._read(
            "list_runs",
            _compact(
                {"process": process, "state": state, "inputs": inputs, "limit": limit, "cursor": cursor}
            ),
        )

    async def extra_tools(self) -> frozenset[str]:
        """The tools the server offers beyond the fourteen (none, unless a transport finds some)."""
        return frozenset()

    async def run_log(
        self, run_id: str, cursor: str | None = None, limit: int | None = None
    ) -> Envelope[RunLog] | None:
        if RUN_LOG_TOOL not in await self.extra_tools():
            return None
        return await self._read(RUN_LOG_TOOL, _compact({"runId": run_id, "cursor": cursor, "limit": limit}))

    async def fetch_file(self, url: str, progress: Progress | None = None) -> FetchedFile | Failure:
        return await fetch_url(url, progress=progress)

    async def whoami(self) -> Who:
        """Who the calls act as, as this client knows it (its identity); remote clients ask the server."""
        return Who.of(self.identity)

    async def close(self) -> None:
        return None

    async def publish(self, source: Path, bind: dict[str, str] | None = None) -> PublishResult:
        return PublishResult(False, None, None, False, ["publishing is offered only by the embedded engine"])

    def people(self) -> list[Identity]:
        return [self.identity]

    def switch_identity(self, identity: Identity) -> None:
        raise PermissionError("switching identity is offered only by the embedded engine")

    async def process_document(self, name: str, version: int) -> Process | None:
        return None
