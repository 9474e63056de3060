"""Remote mode: any conforming server over MCP (Streamable HTTP), acting as the bearer token's person.

Every call goes through one SDK session kept for the console's life (connection.py), on an event
loop of a thread of its own: the SDK passes each answer through several tasks, and on the console's
loop each of those would wait behind a frame being drawn, so a screen of calls would take as many
frames. Transport failures become error envelopes (`retry`, or `forbidden` for a refused token), so
a screen shows them like any other answer instead of crashing; `connect` is the start-up check that
fails fast instead.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jwt

from console.client.base import RequestIds, ToolClient, Who
from console.client.connection import ConnectionFailed, McpConnection
from console.client.engine_thread import EngineThread
from console.client.envelope import failure
from console.client.wire import Failure
from engine.identity import Identity
from engine.tools.dispatch import TOOL_ORDER

WHOAMI = "apc_whoami"
MCP_PATH = "/mcp"
NOT_HERE = (404, 405)


def token_claims(token: str) -> dict[str, Any]:
    """A JWT's claims, unverified (the server decides who the token is); {} for an opaque token."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return {}
    return claims if isinstance(claims, dict) else {}


def token_identity(token: str) -> Identity:
    """A label for the token before the server said who it is: a JWT's email or subject, else its end."""
    claims = token_claims(token)
    name = claims.get("email") or claims.get("sub")
    return Identity("person", str(name) if name else f"token …{token[-4:]}")


def token_who(token: str) -> Who:
    """Who a server without `apc_whoami` is assumed to see: the JWT `email` claim, else a person."""
    email = token_claims(token).get("email")
    label = token_identity(token).id
    return Who("person", label, str(email) if email else None, operator=False, confirmed=False)


def endpoint_urls(url: str) -> list[str]:
    """The URLs `--server URL` may mean, in the order to try: as given, then with `/mcp` added.

    A base URL (`http://host:8765`, with or without a slash) means its `/mcp`; a URL already ending in
    `/mcp` means itself; any other path is tried as given first (another server's endpoint).
    """
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    with_mcp = urlunsplit(parts._replace(path=path + MCP_PATH))
    if path.endswith(MCP_PATH):
        return [urlunsplit(parts._replace(path=path))]
    if not path:
        return [with_mcp]
    return [urlunsplit(parts._replace(path=path)), with_mcp]


class RemoteClient(ToolClient):
    def __init__(
        self,
        url: str,
        token: str,
        *,
        who: Who | None = None,
        request_ids: RequestIds | None = None,
    ) -> None:
        super().__init__(who.identity() if who else token_identity(token), request_ids=request_ids)
        self.url = url
        self._token = token
        self._who = who
        self.connection = McpConnection(url, token)
        self._thread = EngineThread("apc-mcp")

    async def call(self, tool: str, arguments: dict[str, object]) -> dict[str, Any] | Failure:
        try:
            return await self._thread.run(self.connection.call(tool, arguments))
        except ConnectionFailed as exc:
            return failure("forbidden" if exc.refused else "retry", str(exc))

    async def whoami(self) -> Who:
        """`apc_whoami` when the server offers it, else what the token says; sets `identity` to match.

        Raises ConnectionFailed when the server cannot be reached (there is nobody to ask).
        """
        if self._who is None:
            opened = await self._thread.run(self.connection.open())
            who = token_who(self._token)
            if WHOAMI in opened.tools:
                answer = await self._thread.run(self.connection.call(WHOAMI, {}))
                if answer.get("ok"):
                    data = answer["data"]
                    who = Who(data["kind"], data["id"], data.get("email"), bool(data["operator"]))
            self._who = who
            self.identity = who.identity()
        return self._who

    async def extra_tools(self) -> frozenset[str]:
        """What `tools/list` offered beyond the fourteen when the session opened; nothing while it cannot
        be reached."""
        try:
            opened = await self._thread.run(self.connection.open())
        except ConnectionFailed:
            return frozenset()
        return opened.tools - set(TOOL_ORDER)

    async def close(self) -> None:
        try:
            await self._thread.run(self.connection.aclose())
        finally:
            await self._thread.stop()


async def connect(url: str, token: str) -> RemoteClient:
    """A client whose session is open and who knows who it is, at the first URL `url` may mean that
    answers; ConnectionFailed (from the last URL tried) when none does or the token is refused."""
    candidates = endpoint_urls(url)
    for index, candidate in enumerate(candidates):
        client = RemoteClient(candidate, token)
        try:
            await client.whoami()
        except ConnectionFailed as exc:
            await client.close()
            if exc.status in NOT_HERE and index + 1 < len(candidates):
                continue
            raise
        return client
    raise AssertionError("endpoint_urls always names one URL")
