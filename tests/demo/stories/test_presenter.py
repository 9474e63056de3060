"""`apc_demo_control`: the one extra tool of the demo's server. Listed in MCP `tools/list` with its own
schemas, not in `describe` (the fourteen tools unchanged); only operators may call it; a plain server
does not have it."""

from __future__ import annotations

from pathlib import Path

from demo.actors.link import McpAgentLink
from demo.stories.presenter import ConsolePresenter, RemoteControls
from engine.core import Engine
from engine.http.app import RunningServer
from engine.tools.dispatch import TOOL_ORDER
from tests.demo.demo_support import AGENT_TOKENS, OPERATOR_TOKEN, conducted
from tests.support.mcp import McpCaller

TOOL = "apc_demo_control"


async def test_operators_control_the_demo_over_mcp_and_nobody_else(tmp_path: Path) -> None:
    async with conducted(tmp_path, agents=1) as system:
        tokens = system.org.tokens
        mcp = McpCaller(system.server.url, tokens[system.org.operator_email])
        try:
            listed = await mcp.list_tools()
            assert [t["name"] for t in listed] == [*TOOL_ORDER, "apc_run_log", "apc_whoami", TOOL]
            tool = next(t for t in listed if t["name"] == TOOL)
            assert tool["annotations"]["title"] == "Control the live demo"
            assert tool["inputSchema"]["required"] == ["action"]
            assert tool["outputSchema"]["anyOf"][0]["properties"]["ok"] == {"const": True}
            described = await mcp.call("describe", {})
            assert described["data"]["tools"] == list(TOOL_ORDER), "describe is unchanged"

            status = await mcp.call(TOOL, {"action": "status"})
            assert status["ok"] is True
            data = status["data"]
            assert (data["paused"], data["left"], data["story"], data["message"]) == (False, [], None, "")
            assert [a["name"] for a in data["agents"]] == ["agent-ada"]
            assert [m["name"] for m in data["moments"]] == [
                "escalation",
                "refused-then-fixed",
                "unsure-check",
                "rework",
                "lease-lapse",
                "overdue",
                "fork-join",
            ]
            refused = await mcp.call(TOOL, {"action": "stage", "moment": "lease-lapse"})
            assert refused == {
                "ok": False,
                "error": {
                    "code": "invalid",
                    "message": "A lease that lapses and another agent picks up: needs 2 demo agents",
                    "issues": ["A lease that lapses and another agent picks up: needs 2 demo agents"],
                },
            }
            bad = await mcp.call(TOOL, {"action": "dance"})
            assert bad["error"]["issues"] == [
                "unknown action 'dance' (known: status, pause, resume, faster, slower, leave, stage, agent)"
            ]
            odd = await mcp.call(TOOL, {"action": "leave", "runId": "r_1", "extra": 1})
            assert odd["error"]["issues"] == ["extra: not an argument of apc_demo_control"]
            left = await mcp.call(TOOL, {"action": "leave", "runId": "r_1", "stepId": "verify_order"})
            assert left["data"]["left"] == ["r_1 · verify_order"]
        finally:
            await mcp.aclose()

        for who in ("agent-ada", "fiona@example.com"):
            other = McpCaller(system.server.url, tokens[who])
            try:
                assert await other.call(TOOL, {"action": "pause"}) == {
                    "ok": False,
                    "error": {"code": "forbidden", "message": "this tool is not offered to this identity"},
                }
            finally:
                await other.aclose()
        assert system.control.world_paused is False


async def test_a_remote_console_reads_and_steers_the_demo_through_the_tool(tmp_path: Path) -> None:
    async with conducted(tmp_path, agents=2) as system:
        link = await McpAgentLink(system.server.url, system.org.tokens[system.org.operator_email]).open()
        try:
            presenter = ConsolePresenter(RemoteControls(link.call), 90.0)
            status = await presenter.status()
            assert status is not None and presenter.speed == status["speed"]
            assert await presenter.control("agent", {"name": "agent-bo"}) == (True, "agent-bo paused.")
            assert system.control.state("agent-bo").paused is True
            ok, message = await presenter.control("stage", {"moment": "overdue"})
            assert ok and message.startswith("An item going overdue: r_")
            assert await presenter.control("agent", {"name": "nobody"}) == (
                False,
                "no demo agent named 'nobody'",
            )
        finally:
            await link.close()


async def test_a_plain_server_offers_only_the_fourteen_tools(server: RunningServer, engine: Engine) -> None:
    for token in (OPERATOR_TOKEN, AGENT_TOKENS["agent-a"]):
        mcp = McpCaller(server.url, token)
        try:
            assert [t["name"] for t in await mcp.list_tools()] == list(TOOL_ORDER)
            missing = await mcp.call(TOOL, {"action": "status"})
            assert missing["ok"] is False and missing["error"]["code"] == "invalid"
        finally:
            await mcp.aclose()
