"""A request body abandoned halfway is ordinary network life: its one access line (INFO, status 499)
says so, never an ERROR traceback; and a body over the size limit still gets the transport's 413."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from engine.http.app import RunningServer, max_request_bytes
from tests.engine.http.http_support import AGENT_TOKEN, make_org


async def test_an_abandoned_slow_body_is_one_info_line(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    _reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {AGENT_TOKEN}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
    )
    writer.write(head.encode() + b'{"jsonrpc": "2.0",')
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.close()
    await writer.wait_closed()
    for _ in range(100):
        if any(r.name == "apc.http" for r in caplog.records):
            break
        await asyncio.sleep(0.02)
    mine = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "apc.http"]
    assert len(mine) == 1
    assert mine[0][0] == "INFO"
    assert mine[0][1].startswith("POST /mcp 499 agent:a_screener body abandoned after 18 bytes ")
    assert [r.getMessage() for r in caplog.records if r.levelno >= 30] == []


async def test_a_body_over_the_limit_is_413(server: RunningServer) -> None:
    limit = max_request_bytes(make_org())
    async with httpx.AsyncClient() as client:
        response = await client.post(
            server.url,
            content=b"[" + b" " * limit + b"]",
            headers={
                "Authorization": f"Bearer {AGENT_TOKEN}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            },
        )
    assert response.status_code == 413
