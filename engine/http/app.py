"""The HTTP face of the engine: `/mcp` (Streamable HTTP, stateless, JSON responses) and `/files/{id}`.

Stateless JSON keeps every tool call one plain POST, so any MCP client works, and so does a bare
JSON-RPC client over httpx. The server runs inside the caller's asyncio loop: `apc serve` owns one, the
console starts one beside its own UI, tests start one per test.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import uvicorn
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from engine.files import Files
from engine.http.access import AccessLog
from engine.http.auth import HostGuard, IdentityVerifier, OAuthVerifier, security_settings
from engine.http.body import BodyGuard
from engine.http.endpoint import ToolEngine, build_mcp_server
from engine.http.extra import ExtraTool, WithExtraTools
from engine.http.files import file_route
from engine.http.health import Probes
from engine.http.metrics import METRICS_PATH, MeteredEngine, Metrics, metrics_route
from engine.http.stateless import PostOnly
from engine.org import OrgConfig
from engine.store.base import StoreCounts

_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))
"""URLs as written: an issuer is compared as an exact string (RFC 8414), so no slash is added."""

MCP_PATH = "/mcp"
READY_PROBE_KEY = "file_url_secret"
"""A meta row every data folder has: reading it proves the store answers."""
MIN_REQUEST_BYTES = 4 * 1024 * 1024
SHUTDOWN_GRACE_SECONDS = 1


class OperatedStore(Protocol):
    """What the operations endpoints read: a cheap query for `/readyz`, the counts for `/metrics`."""

    async def get_meta(self, key: str) -> str | None: ...

    async def counts(self) -> StoreCounts: ...


class HttpEngine(ToolEngine, Protocol):
    @property
    def org(self) -> OrgConfig: ...

    @property
    def files(self) -> Files: ...

    @property
    def store(self) -> OperatedStore: ...


def build_app(
    engine: HttpEngine,
    *,
    allowed_hosts: Sequence[str] | None = None,
    bind_host: str = "127.0.0.1",
    oauth: OAuthVerifier | None = None,
    public_url: str | None = None,
    extra_tools: Sequence[ExtraTool] = (),
) -> ASGIApp:
    """The ASGI app: `/mcp` behind bearer authentication, `/files/{id}` behind its signature,
    `/metrics`, and the probes `/healthz` and `/readyz`; every request logged once (`access`).

    `allowed_hosts` are the names besides loopback that `Host`/`Origin` may carry (see `hosts`).
    With `oauth`, `public_url` (the server's base URL) lets clients find the protected resource
    metadata named in `WWW-Authenticate`. `extra_tools` are offered beside the protocol's (extra.py).
    """
    served: HttpEngine = WithExtraTools(engine, extra_tools) if extra_tools else engine
    metrics = Metrics(served.tools)
    server = build_mcp_server(MeteredEngine(served, metrics), [tool.definition() for tool in extra_tools])
    settings = security_settings(bind_host, allowed_hosts)
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        security_settings=settings,
        max_request_body_size=max_request_bytes(engine.org),
    )
    resource_url = _URL.validate_python(public_url.rstrip("/") + MCP_PATH) if oauth and public_url else None
    metadata_url = build_resource_metadata_url(resource_url) if resource_url else None
    body_checked = BodyGuard(StreamableHTTPASGIApp(manager), max_request_bytes(engine.org))
    guarded = RequireAuthMiddleware(PostOnly(body_checked), [], metadata_url)
    mcp_app = AuthenticationMiddleware(
        guarded, backend=BearerAuthBackend(IdentityVerifier(engine.org, oauth))
    )
    routes: list[BaseRoute] = [
        Route(MCP_PATH, endpoint=mcp_app),
        file_route(engine.files),
        metrics_route(metrics, engine.store),
    ]
    if oauth and resource_url:
        routes += create_protected_resource_routes(resource_url, [_URL.validate_python(oauth.config.issuer)])
    app = Starlette(
        routes=routes,
        middleware=[Middleware(HostGuard, settings=settings, by_address=(METRICS_PATH,))],
        lifespan=lambda _app: manager.run(),
    )
    return AccessLog(Probes(app, lambda: engine.store.get_meta(READY_PROBE_KEY)), metrics)


def max_request_bytes(org: OrgConfig) -> int:
    """Room for the largest upload the org accepts, base64-encoded, plus the rest of the call."""
    return max(MIN_REQUEST_BYTES, -(-org.server.max_upload_bytes * 4 // 3) + 64 * 1024)


def bind_socket(host: str, port: int | None, *, first: int = 8765, attempts: int = 100) -> socket.socket:
    """A listening socket on `port`; on any free port when it is 0; on the first free one from
    `first` when it is None. Bound before the engine opens, so its URL names the real port."""
    if port is not None:
        return _listening_socket(host, port)
    for candidate in range(first, first + attempts):
        with contextlib.suppress(OSError):
            return _listening_socket(host, candidate)
    raise OSError(f"no free port on {host} in {first}..{first + attempts - 1}")


def first_free_port(host: str = "127.0.0.1", start: int = 8765, attempts: int = 100) -> int:
    """The first port from `start` on that `host` can bind; OSError when none of `attempts` can."""
    for port in range(start, start + attempts):
        with contextlib.suppress(OSError), _bound(host, port):
            return port
    raise OSError(f"no free port on {host} in {start}..{start + attempts - 1}")


@contextlib.contextmanager
def _bound(host: str, port: int) -> Iterator[socket.socket]:
    sock = _listening_socket(host, port)
    try:
        yield sock
    finally:
        sock.close()


def _listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening socket, so a taken port is an OSError here rather than an exit inside uvicorn.

    The protocol must be given as TCP: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say
    so, and without it every response waits ~40 ms for the client's delayed ACK.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class _EmbeddedServer(uvicorn.Server):
    """Uvicorn without its signal handlers: whoever embeds the server decides when it stops."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class RunningServer:
    host: str
    port: int
    url: str
    """The MCP endpoint, e.g. `http://127.0.0.1:8765/mcp`."""
    _server: _EmbeddedServer
    _task: asyncio.Task[None]

    async def stop(self) -> None:
        """Stop accepting, finish or cut in-flight requests, and return within about two seconds."""
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=SHUTDOWN_GRACE_SECONDS + 1)
        except TimeoutError:
            self._server.force_exit = True
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def start_server(
    engine: HttpEngine,
    host: str = "127.0.0.1",
    port: int = 0,
    allowed_hosts: Sequence[str] | None = None,
    *,
    oauth: OAuthVerifier | None = None,
    public_url: str | None = None,
    sock: socket.socket | None = None,
    extra_tools: Sequence[ExtraTool] = (),
) -> RunningServer:
    """Serve `engine` on `host:port` (0 picks a free port), or on `sock` (see `bind_socket`), inside
    the running loop."""
    app = build_app(
        engine,
        allowed_hosts=allowed_hosts,
        bind_host=host,
        oauth=oauth,
        public_url=public_url,
        extra_tools=extra_tools,
    )
    return await serve_asgi(app, host, port, sock=sock)


async def serve_asgi(
    app: ASGIApp, host: str = "127.0.0.1", port: int = 0, *, sock: socket.socket | None = None
) -> RunningServer:
    """Serve any ASGI app (with its lifespan) on `host:port`, or on the listening `sock`, inside the
    running loop; OSError if it cannot bind."""
    sock = sock or _listening_socket(host, port)
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
    )
    server = _EmbeddedServer(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name=f"apc-http:{bound_port}")
    while not server.started:
        if task.done():
            sock.close()
            await task
            raise OSError(f"the HTTP server on {host}:{bound_port} did not start")
        await asyncio.sleep(0.005)
    url_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    url_host = f"[{url_host}]" if ":" in url_host else url_host
    return RunningServer(host, bound_port, f"http://{url_host}:{bound_port}{MCP_PATH}", server, task)
