"""The `/mcp` route of a stateless server: only POST carries a call.

A stateless Streamable HTTP server has no session to stream server-initiated messages on, so a
`GET` (the optional event stream) answers 405, as the transport allows, instead of holding an idle
stream open that only delays shutdown. It sits behind authentication: a caller without a valid token
still gets 401 first.
"""

from __future__ import annotations

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send


class PostOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            response = PlainTextResponse(
                "this server is stateless: POST each JSON-RPC message; there is no event stream to GET",
                status_code=405,
                headers={"Allow": "POST"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
