"""MCP endpoint latency: `get_run` and `get_work` over our `/mcp`, beside a bare MCP SDK server with one
trivial tool on the same transport (Streamable HTTP, stateless, JSON responses), in the same run; and
what each client costs per call.

Both servers run in this process's loop under uvicorn. The endpoint figures use the console's client
(console/client/connection.py: one official MCP SDK session, results not re-checked against the output
schemas); the ratio to the bare ping is what authentication, the host checks and the engine's read add
on top of the SDK and the HTTP stack. The client figures call the same tools with the SDK's own
`call_tool` (which checks every result against the tool's output schema) and with the hand-written
client the console used before (bench/old_mcp_client.py, the baseline), on a page of 100 work items.

    .venv/bin/python bench/mcp_latency.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route

from bench.old_mcp_client import McpHttpClient
from console.client.connection import McpConnection
from engine.clock import SystemClock
from engine.core import Engine
from engine.http.app import MCP_PATH, first_free_port, serve_asgi, start_server
from engine.http.endpoint import result_of
from engine.identity import person
from engine.org import OrgConfig

PROCESS = """
---
name: screening
description: Screen a vendor, then finance approves.
inputs:
  vendorName: string
steps:
  - id: check_vendor
    agent: Check the vendor against the sanctions lists.
    output: { cleared: boolean }
  - id: approve
    person: finance-approver
    approve: Approve when cleared.
  - id: done
    finish: onboarded
---

# Screening
"""
AGENT_TOKEN = "bench-agent-token"
PAGE_ITEMS = 100
WARMUP = 50


def bare_app() -> Starlette:
    """The baseline: the SDK's low-level server with one tool that answers a constant envelope."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="ping", input_schema={"type": "object"})])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return result_of({"ok": True, "data": {}})

    server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    return Starlette(
        routes=[Route(MCP_PATH, StreamableHTTPASGIApp(manager))], lifespan=lambda _app: manager.run()
    )


async def timed(
    calls: int, tools: dict[str, Callable[[], Awaitable[dict[str, Any]]]]
) -> dict[str, list[float]]:
    """Milliseconds per call of each tool, after a warm-up; the tools take turns, so load from anything
    else on the machine falls on all of them alike. Every answer must be `ok`."""
    for _ in range(WARMUP):
        for call in tools.values():
            assert (await call())["ok"]
    samples: dict[str, list[float]] = {name: [] for name in tools}
    for _ in range(calls):
        for name, call in tools.items():
            started = time.perf_counter()
            envelope = await call()
            samples[name].append((time.perf_counter() - started) * 1000)
            assert envelope["ok"], envelope
    return samples


def figures(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), statistics.quantiles(samples, n=100, method="inclusive")[98]


async def sdk_session(stack: AsyncExitStack, url: str, token: str) -> ClientSession:
    http = await stack.enter_async_context(httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}))
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await session.list_tools()
    return session


async def measure(root: Path, calls: int) -> dict[str, tuple[float, float]]:
    folder = root / "screening"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(textwrap.dedent(PROCESS).lstrip())
    org = OrgConfig.build(
        groups={"finance": ["mira@example.com"]},
        people={"mira@example.com": "bench-person-token"},
        agents={"a_bench": AGENT_TOKEN},
    )
    port = first_free_port()
    engine = await Engine.open(
        root / "data", org, clock=SystemClock(), public_base_url=f"http://127.0.0.1:{port}"
    )
    ours = bare = None
    try:
        assert (await engine.publish(folder, {"finance-approver": "finance"})).ok
        run_ids = []
        for n in range(PAGE_ITEMS):
            started = await engine.call(
                person("mira@example.com"),
                "start_run",
                {"process": "screening", "inputs": {"vendorName": f"Acme {n}"}, "requestId": f"bench-{n}"},
            )
            run_ids.append(started["data"]["run"]["id"])
        run_id = run_ids[0]
        page = {"limit": PAGE_ITEMS}
        ours = await start_server(engine, port=port)
        bare = await serve_asgi(bare_app())
        console = McpConnection(ours.url, AGENT_TOKEN)
        baseline = McpConnection(bare.url, "unused")
        async with AsyncExitStack() as stack:
            sdk = await sdk_session(stack, ours.url, AGENT_TOKEN)
            old = await stack.enter_async_context(McpHttpClient(ours.url, AGENT_TOKEN))

            async def sdk_call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await sdk.call_tool(tool, arguments)
                assert isinstance(result.structured_content, dict)
                return result.structured_content

            work = await console.call("get_work", page)
            assert len(work["data"]["items"]) == PAGE_ITEMS, work
            samples = await timed(
                calls,
                {
                    "bare ping": lambda: baseline.call("ping", {}),
                    "get_run": lambda: console.call("get_run", {"runId": run_id}),
                    "get_work": lambda: console.call("get_work", {"limit": 1}),
                    "get_work 100, console client (SDK session)": lambda: console.call("get_work", page),
                    "get_work 100, SDK call_tool (schema-checked)": lambda: sdk_call("get_work", page),
                    "get_work 100, old hand-written client": lambda: old.call("get_work", page),
                },
            )
        await console.aclose()
        await baseline.aclose()
        return {name: figures(values) for name, values in samples.items()}
    finally:
        for running in (ours, bare):
            if running is not None:
                await running.stop()
        await engine.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per tool (default 1000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = asyncio.run(measure(Path(tmp), args.calls))
    base_median, base_p99 = results["bare ping"]
    print(f"MCP latency over Streamable HTTP (stateless JSON), {args.calls} calls each")
    for name, (median, p99) in results.items():
        print(f"{name} median: {median:.2f} ms")
        print(f"{name} p99: {p99:.2f} ms")
    for name in ("get_run", "get_work"):
        print(f"ratio {name} median / bare ping median: {results[name][0] / base_median:.2f}")
        print(f"ratio {name} p99 / bare ping p99: {results[name][1] / base_p99:.2f}")
    old = results["get_work 100, old hand-written client"][0]
    for name in (
        "get_work 100, console client (SDK session)",
        "get_work 100, SDK call_tool (schema-checked)",
    ):
        print(f"ratio {name} / old client, median: {results[name][0] / old:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
