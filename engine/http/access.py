"""One log line per HTTP request: method, path, status, who, the tool calls it carried, duration.

Every request is logged once, refusals (401, 403, 404, 405, 421) included. The path is logged
without its query string, since a signed file URL's signature is a credential, and no header is
logged, so a bearer token never reaches the log. The identity is the one the bearer token resolved
to (`-` when none did). The structured fields ride on the record for the JSON log format.
"""

from __future__ import annotations

import contextvars
import logging
import time
from dataclasses import dataclass, field
from typing import Protocol

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.http.auth import identity_of

log = logging.getLogger("apc.http")

CLIENT_CLOSED_REQUEST = 499


@dataclass
class RequestNote:
    """What the handlers learn about a request that its log line should say."""

    calls: list[str] = field(default_factory=list)
    """`tool code` for each tool call the request carried."""
    abandoned_after: int | None = None
    """Bytes of the body received before the client went away without sending the rest (`body`)."""


_CURRENT: contextvars.ContextVar[RequestNote | None] = contextvars.ContextVar("apc_request", default=None)


def current_request() -> RequestNote | None:
    return _CURRENT.get()


class StatusObserver(Protocol):
    def observe_request(self, status: int) -> None: ...


class AccessLog:
    """ASGI middleware, outermost, so that every answer (the host guard's refusals too) is seen."""

    def __init__(self, app: ASGIApp, observer: StatusObserver | None = None) -> None:
        self.app = app
        self.observer = observer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        note = RequestNote()
        token = _CURRENT.set(note)

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            _CURRENT.reset(token)
            elapsed = (time.perf_counter() - started) * 1000
            identity = identity_of(Request(scope))
            who = f"{identity.kind}:{identity.id}" if identity is not None else "-"
            calls = ", ".join(note.calls)
            if note.abandoned_after is not None:
                # Nothing was answered: the client left halfway through its body (nginx's 499).
                status = CLIENT_CLOSED_REQUEST
                calls = f"body abandoned after {note.abandoned_after} bytes"
            log.info(
                "%s %s %s %s%s %.1fms",
                scope["method"],
                scope["path"],
                status,
                who,
                f" {calls}" if calls else "",
                elapsed,
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "identity": who,
                    "calls": list(note.calls),
                    "duration_ms": round(elapsed, 1),
                },
            )
            if self.observer is not None:
                self.observer.observe_request(status)
