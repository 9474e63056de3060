"""Tool calls as plain JSON-RPC posts to an MCP endpoint, with no MCP session: what a bare client, a
forged request or a load generator sends (tests/support/mcp.py is the SDK client, for everything else).

`tool_call` is the `tools/call` message, `headers(token)` what goes with it, and `Rpc.call` posts one and
returns its envelope, checking that the result's text is strict JSON equal to its structured content.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

ACCEPT = {"Accept": "application/json, text/event-stream"}
"""What a streamable-HTTP MCP client accepts."""


def tool_call(tool: str, arguments: Any = None, *, message_id: int = 1) -> dict[str, Any]:
    """The JSON-RPC `tools/call` message (no arguments: `{}`)."""
    params = {"name": tool, "arguments": {} if arguments is None else arguments}
    return {"jsonrpc": "2.0", "id": message_id, "method": "tools/call", "params": params}


def headers(token: str) -> dict[str, str]:
    """The headers of a post carrying `token` as its bearer."""
    return {**ACCEPT, "Authorization": f"Bearer {token}"}


async def post(url: str, token: str, tool: str = "describe", arguments: Any = None) -> httpx.Response:
    """One `tools/call` posted on a client of its own; the response, whatever its status."""
    async with httpx.AsyncClient() as client:
        return await client.post(url, json=tool_call(tool, arguments), headers=headers(token))


class Rpc:
    """Tool calls posted on `client`; the envelope is checked to be the same as text and structure."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url

    async def call(self, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = await self.client.post(self.url, json=tool_call(tool, arguments), headers=headers(token))
        assert response.status_code == 200, (tool, response.status_code, response.text)
        result = response.json()["result"]
        [content] = result["content"]
        envelope: dict[str, Any] = result["structuredContent"]
        assert content["type"] == "text"
        assert json.loads(content["text"], parse_constant=_refuse) == envelope
        assert result["isError"] is (not envelope["ok"])
        return envelope


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} in a result's text")
