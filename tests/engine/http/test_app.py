"""The public API the console uses: `start_server`, `RunningServer`, `first_free_port`, `build_app`."""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from engine.core import Engine
from engine.http.app import RunningServer, first_free_port, max_request_bytes, start_server
from engine.org import OrgConfig, ServerSettings
from tests.engine.http.http_support import AGENT_TOKEN, ok
from tests.support.mcp import McpCaller

# The starting ports lie below Linux's ephemeral range (32768-60999), where the outgoing connections of
# tests running beside these ones take ports at random: a port after `start` stays free here.


def test_first_free_port_skips_a_taken_port() -> None:
    start = first_free_port("127.0.0.1", start=23765)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", start))
        taken.listen()
        assert first_free_port("127.0.0.1", start=start) == start + 1


def test_first_free_port_gives_up_after_its_attempts() -> None:
    start = first_free_port("127.0.0.1", start=24765)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", start))
        taken.listen()
        with pytest.raises(OSError) as caught:
            first_free_port("127.0.0.1", start=start, attempts=1)
    assert str(caught.value) == f"no free port on 127.0.0.1 in {start}..{start}"


async def test_port_zero_picks_a_port_and_the_url_names_it(engine: Engine) -> None:
    running = await start_server(engine, port=0)
    try:
        assert running.port > 0
        assert running.url == f"http://127.0.0.1:{running.port}/mcp"
        async with McpCaller(running.url, AGENT_TOKEN) as client:
            ok(await client.call("describe"), "describe")
    finally:
        await running.stop()


async def test_a_taken_port_is_an_os_error(engine: Engine, server: RunningServer) -> None:
    with pytest.raises(OSError):
        await start_server(engine, port=server.port)


async def test_stop_returns_promptly_and_frees_the_port(engine: Engine) -> None:
    running = await start_server(engine, port=0)
    async with McpCaller(running.url, AGENT_TOKEN) as client:
        ok(await client.call("describe"), "describe")
        started = time.monotonic()
        await running.stop()
        elapsed = time.monotonic() - started
        with pytest.raises(MCPError, match="Connection closed"):
            await client.call("describe")
    assert elapsed < 2.0
    assert first_free_port("127.0.0.1", start=running.port) == running.port


async def test_responses_are_not_held_back_by_nagle(server: RunningServer) -> None:
    """Every accepted connection has TCP_NODELAY; without it each answer waits for a delayed ACK."""
    async with McpCaller(server.url, AGENT_TOKEN) as client:
        ok(await client.call("describe"), "describe")
        connections = list(server._server.server_state.connections)
        flags = [
            c.transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            for c in connections
        ]
    assert flags and all(flags)


async def test_a_request_body_larger_than_an_upload_allows_is_413(
    server: RunningServer, engine: Engine
) -> None:
    limit = max_request_bytes(engine.org)
    async with httpx.AsyncClient() as client:
        response = await client.post(
            server.url,
            content=b"x" * (limit + 1),
            headers={"Authorization": f"Bearer {AGENT_TOKEN}", "Content-Type": "application/json"},
        )
    assert (response.status_code, response.text) == (413, "Request body too large")


def test_the_request_limit_fits_the_largest_upload_base64_encoded() -> None:
    assert max_request_bytes(OrgConfig.build()) == 13_981_014 + 64 * 1024
    large = OrgConfig.build(server=ServerSettings(max_upload_bytes=30_000_000))
    assert max_request_bytes(large) == 40_000_000 + 64 * 1024
    small = OrgConfig.build(server=ServerSettings(max_upload_bytes=1000))
    assert max_request_bytes(small) == 4 * 1024 * 1024


async def test_calls_run_concurrently(server: RunningServer) -> None:
    async with McpCaller(server.url, AGENT_TOKEN) as client:
        envelopes = await asyncio.gather(*(client.call("describe") for _ in range(8)))
    assert [e["ok"] for e in envelopes] == [True] * 8
