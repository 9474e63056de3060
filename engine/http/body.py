"""The request body of `/mcp`, read once before the MCP transport reads it.

Two things need the raw body. A client that stops sending halfway (a dropped connection, a slow body
abandoned) is ordinary network life: the request's one access line says so (status 499, `access`),
rather than the transport's ERROR traceback. And numbers are checked as written (`numbers`): the issues ride on the ASGI scope under
`NUMBER_ISSUES` to the tool handler, which answers `invalid` before the engine is called. Bodies over
the transport's size limit are passed through unread, so its 413 answer stays the one place for it.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.http.access import current_request
from engine.http.numbers import number_issues

NUMBER_ISSUES = "apc.number_issues"

log = logging.getLogger("apc.http")


class BodyGuard:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or self._declared_too_large(scope):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                note = current_request()
                if note is not None:
                    note.abandoned_after = size
                else:
                    log.info("a client abandoned its request after %d bytes of the body", size)
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
