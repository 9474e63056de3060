"""The baseline only: the hand-written MCP client the console's remote mode used before the SDK session.

JSON-RPC posts to a Streamable HTTP endpoint, envelopes back, over plain httpx. It needs no
session machinery: it initializes once (keeping a session id if the server hands one out), lists
tools, and turns each `tools/call` into the `{ok, data | error}` envelope the tool returned. It
reads a JSON response, or the matching message of an SSE response from servers that stream.
"""

from __future__ import annotations

import json
from itertools import count
from typing import Any

import httpx

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "apc", "version": "1"}
DEFAULT_TIMEOUT = 30.0


class McpError(Exception):
    """The endpoint refused the request or answered with something other than a tool result."""

    def __init__(self, message: str, *, status: int | None = None, code: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class McpAuthError(McpError):
    """HTTP 401: the bearer token is missing, unknown or expired."""


class McpHttpClient:
    """Usage: `async with McpHttpClient(url, token) as client: envelope = await client.call(tool, args)`."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = url
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=timeout)
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self._ids = count(1)
        self.server_info: dict[str, Any] | None = None

    async def __aenter__(self) -> McpHttpClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own_http:
            await self._http.aclose()

    async def initialize(self) -> dict[str, Any]:
        """Run the MCP handshake once; later calls return the server's first answer."""
        if self.server_info is None:
            result, headers = await self._exchange(
                "initialize",
                {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
            )
            session = headers.get("mcp-session-id")
            if session:
                self._headers["Mcp-Session-Id"] = session
            self._headers["MCP-Protocol-Version"] = str(result.get("protocolVersion", PROTOCOL_VERSION))
            await self._notify("notifications/initialized")
            self.server_info = result
        return self.server_info

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server offers (all pages), as MCP tool definitions."""
        await self.initialize()
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result, _ = await self._exchange("tools/list", {"cursor": cursor} if cursor else {})
            tools.extend(result.get("tools", []))
            cursor = result.get("nextCursor")
            if not cursor:
                return tools

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call one tool and return its envelope: `{ok: true, data}` or `{ok: false, error}`."""
        await self.initialize()
        result, _ = await self._exchange("tools/call", {"name": tool, "arguments": arguments or {}})
        return envelope_of(result)

    async def _notify(self, method: str) -> None:
        response = await self._http.post(
            self.url, json={"jsonrpc": "2.0", "method": method}, headers=self._headers
        )
        _raise_for_http(response)

    async def _exchange(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], httpx.Headers]:
        request_id = next(self._ids)
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        response = await self._http.post(self.url, json=body, headers=self._headers)
        _raise_for_http(response)
        message = _response_message(response, request_id)
        if "error" in message:
            error = message["error"] or {}
            raise McpError(
                f"{method}: {error.get('message', 'error')}",
                status=response.status_code,
                code=error.get("code"),
            )
        result = message.get("result")
        if not isinstance(result, dict):
            raise McpError(f"{method}: the response has no result", status=response.status_code)
        return result, response.headers


def envelope_of(result: dict[str, Any]) -> dict[str, Any]:
    """The tool's envelope from a `tools/call` result: structured content, else the JSON text."""
    structured = result.get("structuredContent")
    if isinstance(structured, dict) and "ok" in structured:
        return structured
    for item in result.get("content") or []:
        if isinstance(item, dict) and item.get("type") == "text":
            try:
                parsed = json.loads(item.get("text", ""))
            except ValueError:
                continue
            if isinstance(parsed, dict) and "ok" in parsed:
                return parsed
    raise McpError("tools/call: the result carries no {ok, data | error} envelope")


def _raise_for_http(response: httpx.Response) -> None:
    if response.status_code == 401:
        raise McpAuthError("the server refused the bearer token", status=401)
    if response.status_code >= 400:
        raise McpError(f"HTTP {response.status_code}: {response.text[:200]}", status=response.status_code)


def _response_message(response: httpx.Response, request_id: int) -> dict[str, Any]:
    """The JSON-RPC response for `request_id`, from a JSON body or from an SSE stream's events."""
    kind = response.headers.get("content-type", "").split(";", 1)[0].strip()
    if kind == "text/event-stream":
        for data in _sse_data(response.text):
            try:
                message = json.loads(data)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == request_id:
                return message
        raise McpError("the event stream ended without a response", status=response.status_code)
    try:
        message = response.json()
    except ValueError:
        raise McpError("the response is not JSON", status=response.status_code) from None
    if not isinstance(message, dict):
        raise McpError("the response is not a JSON-RPC message", status=response.status_code)
    return message


def _sse_data(text: str) -> list[str]:
    """The `data` of each event in an SSE body (multi-line data joined with newlines)."""
    events: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        if not line:
            if lines:
                events.append("\n".join(lines))
                lines = []
        elif line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
    if lines:
        events.append("\n".join(lines))
    return events
