"""The endpoint through plain JSON-RPC posts (bare httpx), and through the SDK session tests share."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Any

import httpx

from engine.core import Engine
from engine.http.app import RunningServer
from engine.http.tool_meta import input_schema, output_schema
from tests.engine.http.http_support import AGENT_TOKEN, MIRA_TOKEN, err, full_run, ok
from tests.support.mcp import McpCaller
from tests.support.rpc import headers, post, tool_call


class Callers:
    def __init__(self, url: str, stack: AsyncExitStack) -> None:
        self.url = url
        self.stack = stack
        self.clients: dict[str, McpCaller] = {}

    async def call(self, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if token not in self.clients:
            self.clients[token] = await self.stack.enter_async_context(McpCaller(self.url, token))
        return await self.clients[token].call(tool, arguments)


async def fetch(url: str) -> tuple[int, bytes]:
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
        return response.status_code, response.content


async def test_a_full_run_through_sdk_sessions(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        done = await full_run(Callers(server.url, stack).call, fetch)
    assert done["run_id"].startswith("r_")


async def test_list_tools_and_server_info(server: RunningServer, engine: Engine) -> None:
    async with McpCaller(server.url, AGENT_TOKEN) as client:
        tools = await client.list_tools()
        info = await client.initialize()
    assert [t["name"] for t in tools] == engine.tools
    assert [t["inputSchema"] for t in tools] == [input_schema(name) for name in engine.tools]
    assert [t["outputSchema"] for t in tools] == [output_schema(name) for name in engine.tools]
    assert [t["annotations"]["readOnlyHint"] for t in tools] == [
        name in ("describe", "list_processes", "get_run", "get_work", "list_runs") for name in engine.tools
    ]
    assert info["serverInfo"]["name"] == "apc"
    assert info["capabilities"]["tools"] == {"listChanged": False}


async def test_a_bare_post_needs_no_handshake(server: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            server.url, json=tool_call("get_work", message_id=7), headers=headers(MIRA_TOKEN)
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    message = response.json()
    assert (message["jsonrpc"], message["id"]) == ("2.0", 7)
    result = message["result"]
    assert result["isError"] is False
    assert ok(result["structuredContent"], "get_work") == {"items": [], "nextCursor": None}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


async def test_an_unknown_token_is_http_401_before_any_json_rpc(server: RunningServer) -> None:
    response = await post(server.url, "not-a-token")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_an_unknown_tool_is_an_invalid_envelope(server: RunningServer, engine: Engine) -> None:
    async with McpCaller(server.url, AGENT_TOKEN) as client:
        envelope = await client.call("delete_everything", {})
    err(envelope, "invalid", [f"tool: one of {', '.join(engine.tools)}"])
