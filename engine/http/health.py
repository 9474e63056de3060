"""`/healthz` (the process answers) and `/readyz` (the store answers too), for load balancers.

Both are answered before the Host checks: a balancer probes by address, the answers say nothing but
up or ready, and they change nothing. They take no token.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("apc.http")

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
READY_TIMEOUT_SECONDS = 2.0


class Probes:
    """ASGI middleware answering the two probe paths; every other request goes on to `app`."""

    def __init__(self, app: ASGIApp, ready: Callable[[], Awaitable[object]]) -> None:
        self.app = app
        self.ready = ready

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path not in (HEALTH_PATH, READY_PATH):
            await self.app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            response = JSONResponse(
                {"status": "method not allowed"}, status_code=405, headers={"Allow": "GET"}
            )
        elif path == HEALTH_PATH:
            response = JSONResponse({"status": "ok"})
        else:
            response = await self._readiness()
        await response(scope, receive, send)

    async def _readiness(self) -> JSONResponse:
        try:
            await asyncio.wait_for(self.ready(), READY_TIMEOUT_SECONDS)
        except Exception as exc:
            log.warning("not ready: the store did not answer: %s", type(exc).__name__)
            return JSONResponse({"status": "unavailable", "store": "unreachable"}, status_code=503)
        return JSONResponse({"status": "ready", "store": "ok"})
