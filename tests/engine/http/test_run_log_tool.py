"""`apc_run_log` over MCP: listed in `tools/list` beside the fourteen with its own schemas, `describe`
unchanged, answered for every identity `get_run` answers, its result valid against its schema."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from jsonschema import Draft202012Validator

from console.client.remote import RemoteClient
from engine.core import Engine
from engine.http.app import RunningServer, start_server
from engine.http.standard_extras import standard_extras
from engine.tools.dispatch import TOOL_ORDER
from engine.tools.run_log import result_schema
from tests.engine.http.http_support import AGENT_TOKEN, LENA_TOKEN, OPS_TOKEN, rid
from tests.support.mcp import McpCaller

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
    async with McpCaller(served.url, AGENT_TOKEN) as agent:
        listed = await agent.list_tools()
        assert [t["name"] for t in listed] == [*TOOL_ORDER, TOOL, "apc_whoami"]
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
        async with McpCaller(served.url, token) as reader:
            assert await reader.call(TOOL, {"runId": run_id}) == mine
            missing = await reader.call(TOOL, {"runId": "r_nope"})
            assert missing["error"]["code"] == "not_found"


async def test_the_remote_client_reads_the_log_where_it_is_offered_and_says_none_where_not(
    served: RunningServer, engine: Engine
) -> None:
    agent = RemoteClient(served.url, AGENT_TOKEN)
    try:
        started = await agent.start_run("screening", {"vendorName": "Acme"})
        assert started["ok"]
        run_id = started["data"]["run"]["id"]
        assert await agent.extra_tools() == frozenset({TOOL, "apc_whoami"})
        log = await agent.run_log(run_id, limit=1)
        assert log is not None and log["ok"]
        assert [e["kind"] for e in log["data"]["entries"]] == ["run_started"]
        rest = await agent.run_log(run_id, log["data"]["nextCursor"])
        assert rest is not None and rest["ok"]
        assert [e["kind"] for e in rest["data"]["entries"]] == ["step_ready"]
    finally:
        await agent.close()
    plain = await start_server(engine)
    reader = RemoteClient(plain.url, OPS_TOKEN)
    try:
        assert await reader.run_log(run_id) is None, "a server without the tool: the console falls back"
    finally:
        await reader.close()
        await plain.stop()
