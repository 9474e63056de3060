"""A local chat-completions stub on a real socket, for the OpenAI-compatible evaluator."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route

from tests.engine.evaluator.evaluator_support import Stub


@pytest.fixture
async def stub() -> AsyncIterator[Stub]:
    """The socket is bound and listening before uvicorn starts, so no test waits for start-up."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    server_stub = Stub(url=f"http://127.0.0.1:{port}/v1")
    app = Starlette(routes=[Route("/v1/chat/completions", server_stub.endpoint, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield server_stub
    finally:
        server_stub.release.set()
        server.should_exit = True
        await task
        sock.close()
