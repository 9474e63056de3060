"""The console's only door to a server: the fourteen tools, each answering with the wire envelope.

Every screen talks to a `Client`, so the same console works in-process, over MCP, or against a fake.
Errors stay values (`{ok: false, error}`), exactly as the server sent them, so the console can show
each issue verbatim.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from console.client.envelope import Envelope
from console.client.files import FetchedFile, fetch_url
from engine.document.model import Process
from engine.identity import Identity
from engine.tools.catalog import PublishResult

RequestIds = Callable[[], str]


@dataclass(frozen=True)
class Capabilities:
    """What this connection offers beyond the protocol. Only the embedded engine offers any."""

    publish: bool = False
    switch_identity: bool = False
    process_document: bool = False
    """A published version's document, which the process map and the body are drawn from."""


@runtime_checkable
class Client(Protocol):
    identity: Identity
    capabilities: Capabilities

    async def describe(self) -> Envelope: ...
    async def list_processes(self, cursor: str | None = None) -> Envelope: ...
    async def start_run(
        self, process: str, inputs: dict[str, Any], *, version: int | None = None, mode: str | None = None
    ) -> Envelope: ...
    async def get_run(self, run_id: str) -> Envelope: ...
    async def get_work(
        self, *, limit: int | None = None, cursor: str | None = None, process: str | None = None
    ) -> Envelope: ...
    async def claim(self, run_id: str, step_id: str) -> Envelope: ...
    async def renew(self, token: str, progress: str | None = None) -> Envelope: ...
    async def upload(self, file_name: str, content_type: str, content: bytes) -> Envelope: ...
    async def submit(
        self,
        token: str,
        output: dict[str, Any],
        summary: str,
        *,
        evidence: list[dict[str, str]] | None = None,
        next: str | None = None,
        reason: str | None = None,
    ) -> Envelope: ...
    async def escalate(self, token: str, note: str) -> Envelope: ...
    async def decide(self, arguments: dict[str, Any]) -> Envelope: ...
    async def cancel(self, run_id: str, reason: str) -> Envelope: ...
    async def send_event(self, run_id: str, name: str, data: dict[str, Any] | None = None) -> Envelope: ...
    async def list_runs(
        self,
        *,
        process: str | None = None,
        state: str | None = None,
        inputs: dict[str, Any] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Envelope: ...
    async def fetch_file(self, url: str) -> FetchedFile | Envelope: ...
    async def close(self) -> None: ...

    async def publish(self, source: Path, bind: dict[str, str] | None = None) -> PublishResult: ...
    def people(self) -> list[Identity]: ...
    def switch_identity(self, identity: Identity) -> None: ...
    async def process_document(self, name: str, version: int) -> Process | None: ...


def _compact(arguments: dict[str, Any]) -> dict[str, Any]:
    """Optional arguments the caller left out are omitted, never sent as null."""
    return {key: value for key, value in arguments.items() if value is not None}


class ToolClient:
    """The fourteen tools as methods over one `call(tool, arguments)`; transports implement `call`."""

    identity: Identity
    capabilities: Capabilities = Capabilities()

    def __init__(self, identity: Identity, *, request_ids: RequestIds | None = None) -> None:
        self.identity = identity
        self._request_ids = request_ids or (lambda: str(uuid.uuid4()))

    async def call(self, tool: str, arguments: dict[str, Any]) -> Envelope:
        raise NotImplementedError

    async def _write(self, tool: str, arguments: dict[str, Any]) -> Envelope:
        if "requestId" not in arguments:
            arguments = {**arguments, "requestId": self._request_ids()}
        return await self.call(tool, _compact(arguments))

    async def describe(self) -> Envelope:
        return await self.call("describe", {})

    async def list_processes(self, cursor: str | None = None) -> Envelope:
        return await self.call("list_processes", _compact({"cursor": cursor}))

    async def start_run(
        self, process: str, inputs: dict[str, Any], *, version: int | None = None, mode: str | None = None
    ) -> Envelope:
        return await self._write(
            "start_run", {"process": process, "version": version, "inputs": inputs, "mode": mode}
        )

    async def get_run(self, run_id: str) -> Envelope:
        return await self.call("get_run", {"runId": run_id})

    async def get_work(
        self, *, limit: int | None = None, cursor: str | None = None, process: str | None = None
    ) -> Envelope:
        return await self.call("get_work", _compact({"limit": limit, "cursor": cursor, "process": process}))

    async def claim(self, run_id: str, step_id: str) -> Envelope:
        return await self._write("claim", {"runId": run_id, "stepId": step_id})

    async def renew(self, token: str, progress: str | None = None) -> Envelope:
        return await self._write("renew", {"token": token, "progress": progress})

    async def upload(self, file_name: str, content_type: str, content: bytes) -> Envelope:
        encoded = base64.b64encode(content).decode("ascii")
        return await self._write(
            "upload", {"fileName": file_name, "contentType": content_type, "contentBase64": encoded}
        )

    async def submit(
        self,
        token: str,
        output: dict[str, Any],
        summary: str,
        *,
        evidence: list[dict[str, str]] | None = None,
        next: str | None = None,
        reason: str | None = None,
    ) -> Envelope:
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

    async def escalate(self, token: str, note: str) -> Envelope:
        return await self._write("escalate", {"token": token, "note": note})

    async def decide(self, arguments: dict[str, Any]) -> Envelope:
        """`arguments` is the work item's `decide.arguments` plus the decision and what it requires.

        The placeholder `requestId` the server puts in the prepared call is replaced by a fresh one.
        """
        prepared = {key: value for key, value in arguments.items() if key != "requestId"}
        return await self._write("decide", prepared)

    async def cancel(self, run_id: str, reason: str) -> Envelope:
        return await self._write("cancel", {"runId": run_id, "reason": reason})

    async def send_event(self, run_id: str, name: str, data: dict[str, Any] | None = None) -> Envelope:
        return await self._write("send_event", {"runId": run_id, "name": name, "data": data})

    async def list_runs(
        self,
        *,
        process: str | None = None,
        state: str | None = None,
        inputs: dict[str, Any] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Envelope:
        return await self.call(
            "list_runs",
            _compact(
                {"process": process, "state": state, "inputs": inputs, "limit": limit, "cursor": cursor}
            ),
        )

    async def fetch_file(self, url: str) -> FetchedFile | Envelope:
        return await fetch_url(url)

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
