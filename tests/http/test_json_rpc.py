"""The endpoint through plain JSON-RPC posts: `McpHttpClient` (the console's remote mode) and bare httpx."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route

from engine.core import Engine
from engine.http.app import RunningServer
from engine.http.client import McpAuthError, McpError, McpHttpClient, envelope_of
from engine.http.endpoint import result_of
from engine.http.tool_meta import input_schema, output_schema
from tests.http.http_support import AGENT_TOKEN, MIRA_TOKEN, err, full_run, ok


class Callers:
    def __init__(self, url: str, stack: AsyncExitStack) -> None:
        self.url = url
        self.stack = stack
        self.clients: dict[str, McpHttpClient] = {}

    async def call(self, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if token not in self.clients:
            self.clients[token] = await self.stack.enter_async_context(McpHttpClient(self.url, token))
        return await self.clients[token].call(tool, arguments)


async def fetch(url: str) -> tuple[int, bytes]:
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
        return response.status_code, response.content


async def test_a_full_run_through_mcp_http_client(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        done = await full_run(Callers(server.url, stack).call, fetch)
    assert done["run_id"].startswith("r_")


async def test_list_tools_and_server_info(server: RunningServer, engine: Engine) -> None:
    async with McpHttpClient(server.url, AGENT_TOKEN) as client:
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
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "get_work", "arguments": {}},
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(
            server.url,
            json=body,
            headers={
                "Authorization": f"Bearer {MIRA_TOKEN}",
                "Accept": "application/json, text/event-stream",
            },
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    message = response.json()
    assert (message["jsonrpc"], message["id"]) == ("2.0", 7)
    result = message["result"]
    assert result["isError"] is False
    assert ok(result["structuredContent"], "get_work") == {"items": [], "nextCursor": None}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


async def test_an_unknown_token_raises_mcp_auth_error(server: RunningServer) -> None:
    async with McpHttpClient(server.url, "not-a-token") as client:
        with pytest.raises(McpAuthError) as caught:
            await client.call("describe")
    assert caught.value.status == 401


async def test_an_unknown_tool_is_an_invalid_envelope(server: RunningServer, engine: Engine) -> None:
    async with McpHttpClient(server.url, AGENT_TOKEN) as client:
        envelope = await client.call("delete_everything", {})
    err(envelope, "invalid", [f"tool: one of {', '.join(engine.tools)}"])


async def test_the_client_reads_sse_answers_and_keeps_the_session() -> None:
    """A stateful SDK server answering in SSE: what another conforming server might look like."""

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return result_of({"ok": True, "data": {"echo": params.arguments}})

    manager = StreamableHTTPSessionManager(app=Server("other", on_call_tool=call_tool), json_response=False)
    app = Starlette(routes=[Route("/mcp", StreamableHTTPASGIApp(manager))])
    async with (
        manager.run(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http,
        McpHttpClient("http://127.0.0.1/mcp", "any", http=http) as client,
    ):
        first = await client.call("echo", {"n": 1})
        second = await client.call("echo", {"n": 2})
        assert client.server_info is not None
        assert client.server_info["serverInfo"]["name"] == "other"
    assert (first, second) == (
        {"ok": True, "data": {"echo": {"n": 1}}},
        {"ok": True, "data": {"echo": {"n": 2}}},
    )


async def test_a_result_without_an_envelope_is_an_mcp_error() -> None:
    with pytest.raises(McpError):
        envelope_of({"content": [{"type": "text", "text": "plain words"}], "isError": False})
