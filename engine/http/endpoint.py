"""The engine's tools as MCP tools (spec §4), on the SDK's low-level `Server`.

Every call goes to `engine.call` with the identity the bearer token resolved to, and its envelope
comes back twice: as structured content for clients that read it, and as JSON text for those that do
not. `isError` mirrors `ok`. Arguments are the engine's to check, so a malformed call is an `invalid`
envelope with its issues, not a protocol error. Anything unexpected becomes a generic envelope; the
details go to the log only, so no stack trace, SQL or path reaches a client (DESIGN principle 5).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import mcp_types as types
from mcp.server import Server, ServerRequestContext

from engine.http.auth import identity_of
from engine.http.body import NUMBER_ISSUES
from engine.http.metrics import note_call
from engine.http.tool_meta import tool_definitions
from engine.identity import Identity
from engine.version import package_version

log = logging.getLogger("apc.calls")

SERVER_NAME = "apc"

UNEXPECTED: dict[str, Any] = {
    "ok": False,
    "error": {
        "code": "retry",
        "message": "the server could not complete this call; retry with the same requestId",
    },
}
UNAUTHENTICATED: dict[str, Any] = {
    "ok": False,
    "error": {"code": "forbidden", "message": "no authenticated identity"},
}


class ToolEngine(Protocol):
    """What the endpoint needs of the engine."""

    @property
    def tools(self) -> list[str]: ...

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


def tool_list(tools: list[str]) -> list[types.Tool]:
    """The MCP tool definitions: titles, argument and output schemas, hints (see `tool_meta`)."""
    return tool_definitions(tools)


def result_of(envelope: Mapping[str, Any]) -> types.CallToolResult:
    """The envelope as structured content and as its JSON text, which are always equal.

    `allow_nan=False`: a result that held NaN or an infinity would not be JSON, and strict clients
    could not read it at all; it is logged and answered as the generic `retry` envelope instead.
    """
    try:
        text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        log.exception("a result held a number JSON cannot carry")
        envelope = UNEXPECTED
        text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=dict(envelope),
        is_error=not envelope.get("ok", False),
    )


def inexact(issues: list[str]) -> dict[str, Any]:
    """The `invalid` envelope for arguments whose numbers the edge found it cannot keep (`numbers`)."""
    return {
        "ok": False,
        "error": {"code": "invalid", "message": "numbers must be finite and kept exactly", "issues": issues},
    }


def build_mcp_server(engine: ToolEngine, extra: Sequence[types.Tool] = ()) -> Server[Any]:
    """A low-level MCP server offering exactly the engine's tools, and any `extra` ones (extra.py) the
    engine answers too."""
    added = {tool.name for tool in extra}
    tools = tool_list([name for name in engine.tools if name not in added]) + list(extra)
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        identity = identity_of(ctx.request)
        if identity is None:
            return result_of(UNAUTHENTICATED)
        issues = getattr(ctx.request, "scope", {}).get(NUMBER_ISSUES)
        if issues:
            note_call(identity, params.name, "invalid")
            return result_of(inexact(issues))
        return result_of(await call_logged(engine, identity, params.name, dict(params.arguments or {})))

    return Server(
        SERVER_NAME,
        version=package_version(),
        instructions="Agent Process (core-2) server: call describe first, then get_work.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


async def call_logged(
    engine: ToolEngine, identity: Identity, tool: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """One tool call with its log line; an exception is logged in full and answered generically."""
    started = time.perf_counter()
    try:
        envelope = await engine.call(identity, tool, arguments)
        outcome = "ok" if envelope.get("ok") else str(envelope.get("error", {}).get("code", "error"))
    except Exception:
        log.exception("%s:%s %s raised", identity.kind, identity.id, tool)
        envelope, outcome = UNEXPECTED, "unexpected"
    elapsed = (time.perf_counter() - started) * 1000
    log.debug("%s:%s %s %s %.1fms", identity.kind, identity.id, tool, outcome, elapsed)
    return envelope
