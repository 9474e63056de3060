"""`apc_run_log` over MCP: listed in `tools/list` beside the fourteen with its own schemas, `describe`
unchanged, answered for every identity `get_run` answers, its result valid against its schema."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from jsonschema import Draft202012Validator

from engine.core import Engine
from engine.http.app import RunningServer, start_server
from engine.http.client import McpHttpClient
from engine.http.standard_extras import standard_extras
from engine.tools.dispatch import TOOL_ORDER
from engine.tools.run_log import result_schema
from tests.http.http_support import AGENT_TOKEN, LENA_TOKEN, OPS_TOKEN, rid

TOOL = "apc_run_log"


@pytest.fixture
async def served(engine: Engine, port: int) -> AsyncIterator[RunningServer]:
    running = await start_server(engine, port=port, extra_tools=standard_extras(engine))
    try:
        yield running
    finally:
        await running.stop()


async def test_the_run_log_is_listed_beside_the_fourteen_and_read_by_anyone_get_run_answers(
    served: RunningServer,
) -> None:
    schema = Draft202012Validator(result_schema())
    async with McpHttpClient(served.url, AGENT_TOKEN) as agent:
        listed = await agent.list_tools()
        assert [t["name"] for t in listed] == [*TOOL_ORDER, TOOL]
        tool = next(t for t in listed if t["name"] == TOOL)
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["inputSchema"]["required"] == ["runId"]
        assert tool["outputSchema"]["anyOf"][0]["properties"]["data"]["title"] == "apc_run_log result"
        described = await agent.call("describe", {})
        assert described["data"]["tools"] == list(TOOL_ORDER), "describe is unchanged"
        started = await agent.call(
            "start_run", {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()}
        )
        run_id = started["data"]["run"]["id"]
        mine = await agent.call(TOOL, {"runId": run_id})
    assert mine["ok"] is True and list(schema.iter_errors(mine["data"])) == []
    assert [(e["kind"], e["by"]) for e in mine["data"]["entries"]] == [
        ("run_started", "a_screener"),
        ("step_ready", None),
    ]
    for token in (OPS_TOKEN, LENA_TOKEN):
        async with McpHttpClient(served.url, token) as reader:
            assert await reader.call(TOOL, {"runId": run_id}) == mine
            missing = await reader.call(TOOL, {"runId": "r_nope"})
            assert missing["error"]["code"] == "not_found"
