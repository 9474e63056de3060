"""Bearer authentication: every `/mcp` request carries a token that resolves to exactly one identity.

The token is an org config credential or, when `[oauth]` is configured, an access token from the
org's identity provider. The identity rides on the request (`scope["user"]`, set by the SDK's bearer
middleware) to the tool handler; no tool argument can name or change it.
"""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from pydantic import ConfigDict

from engine.http.auth.oauth import OAuthVerifier
from engine.identity import Identity
from engine.org import OrgConfig


class IdentityToken(AccessToken):
    """The SDK's access token record, carrying the identity the token resolved to."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    identity: Identity


class IdentityVerifier:
    """The SDK `TokenVerifier` for this server: org credentials first, then OAuth access tokens."""

    def __init__(self, org: OrgConfig, oauth: OAuthVerifier | None = None) -> None:
        self.org = org
        self.oauth = oauth

    async def verify_token(self, token: str) -> AccessToken | None:
        identity = self.org.identity_for_token(token)
        if identity is None and self.oauth is not None and token.count(".") == 2:
            identity = await self.oauth.identity(token, self.org)
        if identity is None:
            return None
        return IdentityToken(
            token=token, client_id=f"{identity.kind}:{identity.id}", scopes=[], identity=identity
        )


def identity_of(request: Any) -> Identity | None:
    """The identity the bearer middleware attached to this HTTP request, if any."""
    user = getattr(request, "scope", {}).get("user")
    if isinstance(user, AuthenticatedUser) and isinstance(user.access_token, IdentityToken):
        return user.access_token.identity
    return None
