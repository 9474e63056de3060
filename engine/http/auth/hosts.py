"""Host and Origin checks against DNS rebinding, for every route the endpoint serves.

A browser tricked into resolving an attacker's name to 127.0.0.1 still sends the attacker's name in
`Host`, and a page on another site sends its own `Origin`. Both are refused unless they name this
server: loopback names always, plus the names the operator allows when it binds to a public address.
The checks themselves are the MCP SDK's; this module decides what they allow and applies them to the
file route as well as `/mcp`.

`/metrics` also answers a request that names the server by an IP address and carries no `Origin`: a
Prometheus scraper on another host sends `Host: 10.0.0.5:8765`. That cannot be a rebinding attack,
which always sends the attacker's name; a page fetching the address itself sends its `Origin`, checked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterable

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from engine.net import is_loopback

ANY_HOST = "*"
"""An `allowed_hosts` entry that turns the checks off, for a server behind a proxy that checks hosts."""

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARD_BINDS = ("0.0.0.0", "::", "")


def _host_name(host: str) -> str:
    """The form a `Host` header uses: IPv6 literals in brackets, names lower-cased."""
    host = host.strip().lower()
    try:
        if ipaddress.ip_address(host.strip("[]")).version == 6:
            return f"[{host.strip('[]')}]"
    except ValueError:
        pass
    return host


def security_settings(
    bind_host: str, allowed_hosts: Iterable[str] | None = None
) -> TransportSecuritySettings:
    """What `Host` and `Origin` may say for a server bound to `bind_host`.

    An entry of `allowed_hosts` is a name (`agents.example.com`, any port) or `name:port` (that port
    only); `*` disables the checks. A specific non-loopback bind address is allowed as itself.
    """
    extra = [h.strip() for h in allowed_hosts or () if h.strip()]
    if ANY_HOST in extra:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = list(_LOOPBACK_NAMES)
    if bind_host not in _WILDCARD_BINDS and not is_loopback(bind_host):
        names.append(_host_name(bind_host))
    hosts: list[str] = []
    origins: list[str] = []
    for entry in [*names, *extra]:
        name, _, port = entry.rpartition(":") if _has_port(entry) else (entry, "", "")
        name = _host_name(name)
        for form in [f"{name}:{port}"] if port else [name, f"{name}:*"]:
            hosts.append(form)
            origins.extend((f"http://{form}", f"https://{form}"))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(dict.fromkeys(hosts)),
        allowed_origins=list(dict.fromkeys(origins)),
    )


def _has_port(entry: str) -> bool:
    """`name:8765` and `[::1]:8765` carry a port; `::1` and `name` do not."""
    if entry.startswith("["):
        return "]:" in entry
    return entry.count(":") == 1


class HostGuard:
    """ASGI middleware applying the SDK's Host and Origin checks to every HTTP request; a request to
    one of the `by_address` paths that names the server by an IP address and carries no `Origin`
    passes without them."""

    def __init__(
        self, app: ASGIApp, settings: TransportSecuritySettings, by_address: Collection[str] = ()
    ) -> None:
        self.app = app
        self.checks = TransportSecurityMiddleware(settings)
        self.by_address = by_address

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            if not (scope["path"] in self.by_address and _by_address(request)):
                refusal = await self.checks.validate_request(request, is_post=False)
                if refusal is not None:
                    await refusal(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def _by_address(request: Request) -> bool:
    """Whether the request names the server by an IP address (any port) and no page sent it."""
    host = request.headers.get("host", "")
    if "origin" in request.headers or not host:
        return False
    name = host[1 : host.find("]")] if host.startswith("[") else host.rpartition(":")[0] or host
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
