"""Remote mode: any conforming server over MCP (Streamable HTTP), acting as the bearer token's person.

Transport failures become error envelopes (`retry`, or `forbidden` for a refused token), so a screen
shows them like any other answer instead of crashing.
"""

from __future__ import annotations

from typing import Any

import httpx
import jwt

from console.client.base import RequestIds, ToolClient
from console.client.envelope import failure
from console.client.wire import Failure
from engine.http.client import McpAuthError, McpError, McpHttpClient
from engine.identity import Identity
from engine.tools.dispatch import TOOL_ORDER


def token_identity(token: str) -> Identity:
    """Who the token acts as, for display: a JWT's email or subject when it is one, else its last characters.

    The server decides who the token is; the protocol does not tell a client, so this is only a label.
    """
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        claims = {}
    name = claims.get("email") or claims.get("sub")
    return Identity("person", str(name) if name else f"token …{token[-4:]}")


class RemoteClient(ToolClient):
    def __init__(
        self,
        url: str,
        token: str,
        *,
        http: httpx.AsyncClient | None = None,
        request_ids: RequestIds | None = None,
    ) -> None:
        super().__init__(token_identity(token), request_ids=request_ids)
        self.url = url
        self._mcp = McpHttpClient(url, token, http=http)
        self._extra: frozenset[str] | None = None

    async def call(self, tool: str, arguments: dict[str, object]) -> dict[str, Any] | Failure:
        try:
            return await self._mcp.call(tool, arguments)
        except McpAuthError:
            return failure("forbidden", f"{self.url} refused the token")
        except McpError as exc:
            return failure("retry", f"{self.url}: {exc}")
        except httpx.HTTPError as exc:
            return failure("retry", f"cannot reach {self.url}: {exc.__class__.__name__}")

    async def extra_tools(self) -> frozenset[str]:
        """What `tools/list` offers beyond the fourteen, asked once; nothing while it cannot be asked."""
        if self._extra is None:
            try:
                listed = await self._mcp.list_tools()
            except (McpError, httpx.HTTPError):
                return frozenset()
            self._extra = frozenset(str(t.get("name")) for t in listed) - set(TOOL_ORDER)
        return self._extra

    async def close(self) -> None:
        await self._mcp.aclose()
