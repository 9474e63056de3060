"""Who may call the endpoint: a bearer token that resolves to one identity (an org config credential,
or an OAuth access token the org's identity provider signed), on a request whose Host and Origin name
this server.

The endpoint wraps its routes in `HostGuard` (`hosts`) and verifies tokens with `IdentityVerifier`
(`bearer`), which hands OAuth tokens to `OAuthVerifier` (`oauth`) and its key set (`jwks`); whatever
handles a request reads the identity with `identity_of`.
"""

from engine.http.auth.bearer import IdentityVerifier, identity_of
from engine.http.auth.hosts import HostGuard, security_settings
from engine.http.auth.oauth import OAuthVerifier

__all__ = ["HostGuard", "IdentityVerifier", "OAuthVerifier", "identity_of", "security_settings"]
