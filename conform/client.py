"""The runner's only way to the server: MCP over Streamable HTTP with the official SDK client.

One initialized session per endpoint and bearer token, all opened (and later closed) by the task that
runs the whole conformance run, as the SDK's task groups require; checks running in other tasks share
them, which the SDK supports (each request waits on its own response). With several endpoints (one
server scaled out over one database) every call goes to the next endpoint in turn.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from conform.config import Actor

CALL_TIMEOUT_SECONDS = 60.0


class TransportError(Exception):
    """The endpoint could not be reached, refused the token, or answered without a tool envelope."""


@dataclass(frozen=True)
class Reply:
    envelope: dict[str, Any]
    server: str
    problems: tuple[str, ...] = ()
    """How the MCP result's two forms disagree with each other or with `isError`, if they do."""


def envelope_of(tool: str, result: CallToolResult) -> Reply:
    """The `{ok, data | error}` envelope of a tool result, and any disagreement between its forms."""
    structured = result.structured_content
    texts = [getattr(item, "text", None) for item in result.content]
    parsed: list[Any] = []
    for text in texts:
        if isinstance(text, str):
            try:
                parsed.append(json.loads(text))
            except ValueError:
                continue
    envelope = structured if isinstance(structured, dict) and "ok" in structured else None
    if envelope is None:
        envelope = next((p for p in parsed if isinstance(p, dict) and "ok" in p), None)
    if envelope is None:
        raise TransportError(f"{tool}: the result carries no {{ok, data | error}} envelope")
    problems: list[str] = []
    if not isinstance(structured, dict):
        problems.append("no structuredContent")
    if not any(p == envelope for p in parsed):
        problems.append("no text content equal to the structured content")
    if result.is_error is not (envelope.get("ok") is not True):
        problems.append(f"isError is {result.is_error} on an envelope with ok {envelope.get('ok')}")
    return Reply(envelope, "", tuple(problems))


@dataclass
class Connection:
    """Sessions for every (endpoint, identity); `call` picks the endpoints round-robin."""

    servers: tuple[str, ...]
    _stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    _sessions: dict[tuple[str, str], ClientSession] = field(default_factory=dict)
    _turn: itertools.count[int] = field(default_factory=itertools.count)

    async def open(self, actors: list[Actor]) -> None:
        """Initialize one session per endpoint and actor; TransportError names the one that failed."""
        for server in self.servers:
            for actor in actors:
                try:
                    self._sessions[(server, actor.name)] = await open_session(
                        self._stack, server, actor.token
                    )
                except Exception as exc:
                    raise TransportError(f"{actor.name} cannot connect to {server}: {describe(exc)}") from exc

    async def call(self, actor: Actor, tool: str, arguments: dict[str, Any]) -> Reply:
        server = self.servers[next(self._turn) % len(self.servers)]
        session = self._sessions[(server, actor.name)]
        try:
            result = await session.call_tool(tool, arguments, read_timeout_seconds=CALL_TIMEOUT_SECONDS)
        except Exception as exc:
            raise TransportError(f"{tool} as {actor.name} on {server}: {describe(exc)}") from exc
        if not isinstance(result, CallToolResult):
            raise TransportError(
                f"{tool}: the server answered with {type(result).__name__}, not a tool result"
            )
        reply = envelope_of(tool, result)
        return Reply(reply.envelope, server, reply.problems)

    async def close(self) -> None:
        """Close every session; a server that went away meanwhile does not hide the report."""
        with contextlib.suppress(Exception):
            await self._stack.aclose()


async def open_session(stack: AsyncExitStack, url: str, token: str) -> ClientSession:
    """An initialized SDK session with `Authorization: Bearer <token>`, closed with `stack`.

    A session that fails half-way is closed at once, its own errors dropped: the caller reports the
    first one, and `stack` holds only sessions that opened."""
    own = AsyncExitStack()
    try:
        http = await own.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=CALL_TIMEOUT_SECONDS)
        )
        read, write = await own.enter_async_context(streamable_http_client(url, http_client=http))
        session = await own.enter_async_context(ClientSession(read, write))
        await session.initialize()
    except BaseException:
        # The SDK reports a failed connection by cancelling the handshake and raising the cause
        # from its task group on exit: closing is where the real error comes out.
        try:
            await own.aclose()
        except Exception as cause:
            raise TransportError(describe(cause)) from cause
        raise
    stack.push_async_exit(own)
    return session


async def refused_token(url: str, token: str) -> str | None:
    """None if `token` opens a session and may call `describe`; else how the server refused it."""
    async with AsyncExitStack() as stack:
        try:
            session = await open_session(stack, url, token)
            result = await session.call_tool("describe", {})
        except Exception as exc:
            return describe(exc)
        if isinstance(result, CallToolResult) and result.is_error:
            return "describe answered with an error"
        return None


def describe(exc: BaseException) -> str:
    """A one-line account of a transport failure, digging out the HTTP status from SDK wrappers."""
    if isinstance(exc, TransportError):
        return str(exc)
    seen: list[str] = []
    current: BaseException | None = exc
    while current is not None and len(seen) < 2:
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
            continue
        response = getattr(current, "response", None)
        status = getattr(response, "status_code", None)
        if status is not None:
            return f"HTTP {status}"
        text = str(current).strip()
        if text and text not in seen:
            seen.append(text)
        current = current.__cause__ or current.__context__
    return "; ".join(seen) or type(exc).__name__
