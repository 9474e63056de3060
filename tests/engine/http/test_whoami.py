"""`apc_whoami`: offered by `apc serve`'s standard extras to every identity, with its own schemas."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from jsonschema import Draft202012Validator

from engine.core import Engine
from engine.http.app import RunningServer, start_server
from engine.http.standard_extras import standard_extras
from engine.http.whoami import DATA_SCHEMA, INPUT_SCHEMA, TOOL
from engine.tools.dispatch import TOOL_ORDER
from tests.engine.http.http_support import AGENT, AGENT_TOKEN, MIRA, MIRA_TOKEN, OPS, OPS_TOKEN
from tests.support.mcp import McpCaller


@pytest.fixture
async def standard(engine: Engine) -> AsyncIterator[RunningServer]:
    running = await start_server(engine, port=0, extra_tools=standard_extras(engine))
    try:
        yield running
    finally:
        await running.stop()


@pytest.mark.parametrize(
    ("token", "data"),
    [
        (OPS_TOKEN, {"kind": "person", "id": OPS, "email": OPS, "operator": True}),
        (MIRA_TOKEN, {"kind": "person", "id": MIRA, "email": MIRA, "operator": False}),
        (AGENT_TOKEN, {"kind": "agent", "id": AGENT, "email": None, "operator": False}),
    ],
)
async def test_every_identity_learns_who_it_is(
    standard: RunningServer, token: str, data: dict[str, object]
) -> None:
    async with McpCaller(standard.url, token) as caller:
        answer = await caller.call(TOOL, {})
    assert answer == {"ok": True, "data": data}
    Draft202012Validator(DATA_SCHEMA).validate(answer["data"])


async def test_it_is_listed_read_only_with_its_schemas_and_describe_is_unchanged(
    standard: RunningServer,
) -> None:
    async with McpCaller(standard.url, MIRA_TOKEN) as caller:
        listed = await caller.list_tools()
        described = await caller.call("describe", {})
    assert [tool["name"] for tool in listed] == [*TOOL_ORDER, "apc_run_log", TOOL]
    tool = listed[-1]
    assert tool["inputSchema"] == INPUT_SCHEMA
    assert tool["outputSchema"]["anyOf"][0]["properties"]["data"] == DATA_SCHEMA
    assert (tool["annotations"]["readOnlyHint"], tool["annotations"]["destructiveHint"]) == (True, False)
    assert described["data"]["tools"] == list(TOOL_ORDER)
    Draft202012Validator.check_schema(DATA_SCHEMA)


async def test_arguments_are_refused_by_name(standard: RunningServer) -> None:
    async with McpCaller(standard.url, AGENT_TOKEN) as caller:
        answer = await caller.call(TOOL, {"as": "ops@example.com"})
    assert answer == {
        "ok": False,
        "error": {
            "code": "invalid",
            "message": "as: not an argument of apc_whoami",
            "issues": ["as: not an argument of apc_whoami"],
        },
    }


async def test_a_server_without_the_standard_extras_does_not_offer_it(server: RunningServer) -> None:
    async with McpCaller(server.url, OPS_TOKEN) as caller:
        assert TOOL not in [tool["name"] for tool in await caller.list_tools()]
