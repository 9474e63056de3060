"""The endpoint through the official MCP SDK client, as any MCP-speaking agent would reach it."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Any

import httpx
import httpx2
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from engine.core import Engine
from engine.http.app import RunningServer
from engine.http.tool_meta import input_schema, output_schema
from engine.tools.arguments import ARGUMENTS
from tests.engine.http.http_support import AGENT_TOKEN, MIRA_TOKEN, err, full_run, ok


class SdkCallers:
    """One initialized SDK session per bearer token, all closed together."""

    def __init__(self, url: str, stack: AsyncExitStack) -> None:
        self.url = url
        self.stack = stack
        self.sessions: dict[str, ClientSession] = {}

    async def session(self, token: str) -> ClientSession:
        if token not in self.sessions:
            http = await self.stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            )
            read, write = await self.stack.enter_async_context(
                streamable_http_client(self.url, http_client=http)
            )
            session = await self.stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            self.sessions[token] = session
        return self.sessions[token]

    async def call(self, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The envelope, after checking both of its forms in the result agree with `isError`."""
        result = await (await self.session(token)).call_tool(tool, arguments)
        envelope = result.structured_content
        assert envelope is not None
        [content] = result.content
        assert content.type == "text"
        assert json.loads(content.text) == envelope
        assert result.is_error is (not envelope["ok"])
        return envelope


async def fetch(url: str) -> tuple[int, bytes]:
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
        return response.status_code, response.content


async def test_tools_list_offers_every_engine_tool_with_its_argument_schema(
    server: RunningServer, engine: Engine
) -> None:
    async with AsyncExitStack() as stack:
        session = await SdkCallers(server.url, stack).session(AGENT_TOKEN)
        listed = await session.list_tools()
    assert [tool.name for tool in listed.tools] == engine.tools
    assert {tool.name: tool.input_schema for tool in listed.tools} == {
        name: input_schema(name) for name in engine.tools
    }
    assert {tool.name: without_descriptions(tool.input_schema) for tool in listed.tools} == {
        name: ARGUMENTS[name].model_json_schema() for name in engine.tools
    }, "the argument models' schemas, with words added"
    assert {tool.name: tool.output_schema for tool in listed.tools} == {
        name: output_schema(name) for name in engine.tools
    }
    assert all(tool.description and tool.title for tool in listed.tools)


def without_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    stripped = json.loads(json.dumps(schema))
    for table in [stripped["properties"], *(d["properties"] for d in stripped.get("$defs", {}).values())]:
        for prop in table.values():
            del prop["description"]
    return stripped


async def test_a_full_run_through_the_sdk_client(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        callers = SdkCallers(server.url, stack)
        done = await full_run(callers.call, fetch)
        again = await callers.call(AGENT_TOKEN, "get_run", {"runId": done["run_id"]})
    assert again["data"]["run"]["outcome"] == "onboarded"


async def test_an_error_envelope_is_a_tool_error_result(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        callers = SdkCallers(server.url, stack)
        envelope = await callers.call(MIRA_TOKEN, "get_run", {"runId": "r_missing"})
    err(envelope, "not_found")
    assert envelope["error"]["message"] == "run 'r_missing' not found in this organization"


async def test_the_sdk_client_on_the_2026_protocol_works_too(server: RunningServer) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {AGENT_TOKEN}"}) as http,
        Client(streamable_http_client(server.url, http_client=http), mode="auto") as client,
    ):
        described = await client.call_tool("describe", {})
        refused = await client.call_tool("get_run", {"runId": 3})
        assert client.session._negotiated_version == "2026-07-28"
    assert described.structured_content is not None
    assert ok(described.structured_content, "describe")["version"] == "core-2"
    assert refused.is_error is True
    assert refused.structured_content is not None
    err(refused.structured_content, "invalid", ["runId: expected string"])
