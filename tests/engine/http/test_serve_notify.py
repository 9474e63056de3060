"""`apc serve` delivers the outbox: a `[[notify]]` target on a local receiver gets the new work item
that a person's run opened, signed, without anyone asking for it."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from engine.http.app import RunningServer, serve_asgi
from engine.http.serve import ServeOptions, serve
from tests.engine.http.http_support import MIRA, MIRA_TOKEN, ok
from tests.support.mcp import McpCaller
from tests.support.ports import free_port
from tests.support.processes import write_process

SECRET = "serve-test-secret-0001"
TASK = """
---
name: chase
description: One task for finance.
steps:
  - id: call
    person: collector
    task: Call the customer.
    next: done
  - id: done
    finish: done
---
"""
WAIT_SECONDS = 20.0


async def test_serve_delivers_new_work_to_a_notify_target(tmp_path: Path) -> None:
    got: asyncio.Queue[tuple[dict[str, str], bytes]] = asyncio.Queue()

    async def receive(request: Request) -> PlainTextResponse:
        got.put_nowait((dict(request.headers), await request.body()))
        return PlainTextResponse("ok")

    receiver = await serve_asgi(Starlette(routes=[Route("/hook", receive, methods=["POST"])]), "127.0.0.1", 0)
    write_process(tmp_path / "processes", TASK)
    config = tmp_path / "org.toml"
    config.write_text(
        f'[[groups]]\nid = "g_finance"\nmembers = ["{MIRA}"]\n\n'
        f'[[people]]\nemail = "{MIRA}"\ntoken = "{MIRA_TOKEN}"\n\n'
        '[[processes]]\npath = "processes/chase"\nbind = { collector = "g_finance" }\n\n'
        f'[[notify]]\nurl = "http://127.0.0.1:{receiver.port}/hook"\nkinds = ["new_work"]\nsecret = "{SECRET}"\n'
    )
    stop = asyncio.Event()
    ready: asyncio.Queue[RunningServer] = asyncio.Queue()
    options = ServeOptions(config=config, data=tmp_path / "data", port=free_port())
    task = asyncio.create_task(serve(options, stop=stop, on_ready=ready.put_nowait))
    try:
        server = await asyncio.wait_for(ready.get(), WAIT_SECONDS)
        async with McpCaller(server.url, MIRA_TOKEN) as client:
            run = ok(
                await client.call("start_run", {"process": "chase", "inputs": {}, "requestId": "req-1"}),
                "start_run",
            )
        headers, body = await asyncio.wait_for(got.get(), WAIT_SECONDS)
    finally:
        stop.set()
        status = await task
        await receiver.stop()
    assert status == 0
    sent = json.loads(body)
    assert (sent["kind"], sent["run"], sent["step"], sent["recipients"]) == (
        "new_work",
        {"id": run["run"]["id"], "process": "chase"},
        "call",
        [MIRA],
    )
    signed = f"{headers['x-apc-timestamp']}.".encode() + body
    assert (
        headers["x-apc-signature"]
        == "sha256=" + hmac.new(SECRET.encode(), signed, hashlib.sha256).hexdigest()
    )
