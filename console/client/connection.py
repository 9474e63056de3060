"""One MCP session over Streamable HTTP with the official SDK client, kept for the console's life.

The SDK's session lives inside task groups that must be entered and left by one task, while the
console calls from many (workers, key handlers). So one owner task opens the session and holds it
until it is closed or drops; any task may call through it meanwhile (the SDK matches each answer to
its request). A call that finds the transport broken drops the session; the next call opens a new one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolRequest, CallToolRequestParams, CallToolResult

CALL_TIMEOUT_SECONDS = 30.0
REFUSED = (401, 403)

log = logging.getLogger("apc.console.client")


class ConnectionFailed(Exception):
    """The endpoint could not be reached, refused the token, or is not an MCP endpoint."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def refused(self) -> bool:
        return self.status in REFUSED


@dataclass(frozen=True)
class Opened:
    session: ClientSession
    tools: frozenset[str]
    """What `tools/list` offered when the session opened (for extra tools such as `apc_whoami`)."""


class McpConnection:
    """`await connection.call(tool, arguments)` answers the tool's `{ok, data | error}` envelope.

    Raises ConnectionFailed when there is no session to call through (and drops it, so the next call
    reconnects). `opened` counts the sessions opened so far.
    """

    def __init__(self, url: str, token: str, *, timeout: float = CALL_TIMEOUT_SECONDS) -> None:
        self.url = url
        self._token = token
        self._timeout = timeout
        self._current: asyncio.Future[Opened] | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._last_status: int | None = None
        self.opened = 0

    async def open(self) -> Opened:
        """The open session, opening one first when there is none."""
        if self._current is None or (self._current.done() and self._current.exception() is not None):
            await self._retire()
            loop = asyncio.get_running_loop()
            self._current, self._stop = loop.create_future(), asyncio.Event()
            self._owner = asyncio.create_task(self._own(self._current, self._stop), name=f"mcp {self.url}")
        current = self._current
        try:
            return await asyncio.shield(current)
        except ConnectionFailed:
            if self._current is current:
                await self._retire()
            raise

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        opened = await self.open()
        request = CallToolRequest(params=CallToolRequestParams(name=tool, arguments=arguments))
        self._last_status = None
        try:
            # `send_request`, not `call_tool`: the SDK's call_tool checks every result against the tool's
            # output schema, which on a page of a big queue costs more than drawing it (bench/mcp_latency.py).
            result = await opened.session.send_request(request, CallToolResult, self._timeout)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                await self._retire()
                raise ConnectionFailed(f"lost the connection to {self.url}") from exc
            status = self._last_status
            if status is not None and status >= 400:
                if status in REFUSED:
                    raise ConnectionFailed(
                        f"{self.url} refused the token (HTTP {status})", status=status
                    ) from exc
                raise ConnectionFailed(f"{self.url} answered HTTP {status}", status=status) from exc
            raise ConnectionFailed(f"{tool}: {exc}") from exc
        except Exception as exc:
            await self._retire()
            raise ConnectionFailed(f"cannot reach {self.url}: {describe(exc)}") from exc
        return envelope_of(tool, result)

    async def aclose(self) -> None:
        await self._retire()

    async def _retire(self) -> None:
        """Let the owner task close its session (in its own task, as the SDK requires)."""
        owner, stop = self._owner, self._stop
        self._owner = self._stop = self._current = None
        if stop is not None:
            stop.set()
        if owner is not None:
            await asyncio.gather(owner, return_exceptions=True)

    async def _own(self, ready: asyncio.Future[Opened], stop: asyncio.Event) -> None:
        stack = AsyncExitStack()
        failure: BaseException | None = None
        try:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {self._token}"},
                    timeout=self._timeout,
                    event_hooks={"response": [self._saw]},
                )
            )
            read, write = await stack.enter_async_context(streamable_http_client(self.url, http_client=http))
            session = await stack.enter_async_context(
                ClientSession(read, write, read_timeout_seconds=self._timeout)
            )
            await session.initialize()
            listed = await session.list_tools()
            self.opened += 1
            ready.set_result(Opened(session, frozenset(tool.name for tool in listed.tools)))
            await stop.wait()
        except BaseException as exc:
            failure = exc
        try:
            await stack.aclose()
        except Exception as exc:
            # The SDK reports a failed handshake by cancelling it and raising the cause from its task
            # group on exit: that cause is the one worth telling.
            failure = exc if not ready.done() else failure
            log.debug("closing the MCP session of %s: %s", self.url, describe(exc))
        if failure is not None and not ready.done():
            ready.set_exception(self._failed(failure))
        if isinstance(failure, asyncio.CancelledError):
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise failure
        elif failure is not None and not isinstance(failure, Exception):
            raise failure

    async def _saw(self, response: httpx2.Response) -> None:
        if response.request.method == "POST":
            self._last_status = response.status_code

    def _failed(self, exc: BaseException) -> ConnectionFailed:
        status = self._last_status
        if status in REFUSED:
            return ConnectionFailed(f"{self.url} refused the token (HTTP {status})", status=status)
        if status is not None and status >= 400:
            return ConnectionFailed(f"{self.url} is not an MCP endpoint (HTTP {status})", status=status)
        return ConnectionFailed(f"cannot reach {self.url}: {describe(exc)}")


def envelope_of(tool: str, result: CallToolResult) -> dict[str, Any]:
    """The `{ok, data | error}` envelope of a tool result: its structured content, else its JSON text."""
    structured = result.structured_content
    if isinstance(structured, dict) and "ok" in structured:
        return structured
    for item in result.content:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            if isinstance(parsed, dict) and "ok" in parsed:
                return parsed
    raise ConnectionFailed(f"{tool}: the result carries no {{ok, data | error}} envelope")


def describe(exc: BaseException) -> str:
    """One line for a transport failure, from inside the SDK's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
