"""What of an authenticated `/mcp` request reaches the MCP transport: a POST, its body read once.

The server is stateless and never sends on its own, so a GET (a standalone event stream) would only
hold a connection open forever, and there is no session for a DELETE to end: both are answered 405
here, after authentication, like any other request. Two things need the raw body of a POST. A client that stops sending halfway (a dropped connection, a slow body
abandoned) is ordinary network life: it gets one INFO line here, rather than the transport's ERROR
traceback. And numbers are checked as written (`numbers`): the issues ride on the ASGI scope under
`NUMBER_ISSUES` to the tool handler, which answers `invalid` before the engine is called. Bodies over
the transport's size limit are passed through unread, so its 413 answer stays the one place for it.
"""

from __future__ import annotations

import logging

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.http.numbers import number_issues

NUMBER_ISSUES = "apc.number_issues"

log = logging.getLogger("apc.http")


class BodyGuard:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") != "POST":
            response = PlainTextResponse(
                "only POST is served here", status_code=405, headers={"Allow": "POST"}
            )
            await response(scope, receive, send)
            return
        if scope["type"] != "http" or self._declared_too_large(scope):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                client = scope.get("client") or ("?", 0)
                log.info("%s:%s abandoned its request after %d bytes of the body", client[0], client[1], size)
                return
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_bytes:
                await self.app(scope, _replay(chunks, True, receive), send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        issues = number_issues(body)
        inner = {**scope, NUMBER_ISSUES: issues} if issues else scope
        await self.app(inner, _replay([body], False, receive), send)

    def _declared_too_large(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                return not value.isdigit() or int(value) > self.max_bytes
        return False


def _replay(chunks: list[bytes], more: bool, receive: Receive) -> Receive:
    """A `receive` that hands out the body read so far, then whatever the client sends next."""
    pending: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": more}]

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed
