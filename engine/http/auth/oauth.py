"""OAuth 2.1 resource server: the org's identity provider vouches for a caller with a signed JWT.

Spec §4 puts the tools behind OAuth bearer tokens. The endpoint accepts an access token only when its
signature verifies against the issuer's published keys, it has not expired, and it names this server
as audience and the configured issuer. The token then maps to exactly one identity the org config
knows: an agent by `agent_claim` (checked first, so an agent client never passes as a person, spec §6
rule 4), otherwise a person by `email` (listed in `[[people]]` or as a group member). Why a token was refused is logged, never told to the caller.

The `[oauth]` table lives in the org config TOML and is parsed with it (`engine.org`); this module
holds only the verifier.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import jwt

from engine.http.auth.jwks import KeySet
from engine.identity import Identity
from engine.org import ConfigError, OAuthConfig, OrgConfig

log = logging.getLogger("apc.oauth")

LEEWAY_SECONDS = 30
"""Clock skew tolerated between the identity provider and this server on `exp`, `nbf` and `iat`."""


class OAuthVerifier:
    """Verifies access tokens against the issuer's key set (see `jwks`: a URL's keys stay current)."""

    def __init__(self, config: OAuthConfig, keys: KeySet) -> None:
        self.config = config
        self.keys = keys

    @classmethod
    async def from_config(cls, config: OAuthConfig) -> OAuthVerifier:
        """Read the key set from `jwks_file`, or fetch `jwks_url`; a failure is a ConfigError."""
        if config.jwks_file is not None:
            try:
                jwks = json.loads(config.jwks_file.read_text(encoding="utf-8"))
            except OSError as exc:
                raise ConfigError(
                    f"oauth.jwks_file: cannot read {config.jwks_file} ({exc.strerror})"
                ) from None
            except ValueError:
                raise ConfigError(f"oauth.jwks_file: {config.jwks_file} is not JSON") from None
            return cls(config, KeySet.from_jwks(jwks))
        assert config.jwks_url is not None
        return cls(config, await KeySet.from_url(config.jwks_url))

    async def claims(self, token: str) -> dict[str, Any] | None:
        """The verified claims of `token`, or None when it does not verify."""
        try:
            header = jwt.get_unverified_header(token)
            kid = header.get("kid")
            key = await self.keys.key_for(kid if isinstance(kid, str) else None)
            if key is None:
                log.info("oauth token refused: no key for kid %r", kid)
                return None
            return jwt.decode(
                token,
                key=key.key,
                algorithms=[key.algorithm_name],
                audience=self.config.audience,
                issuer=self.config.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            log.info("oauth token refused: %s", exc)
            return None

    async def identity(self, token: str, org: OrgConfig) -> Identity | None:
        """The org identity a verified token stands for, or None."""
        claims = await self.claims(token)
        if claims is None:
            return None
        agent_claim = self.config.agent_claim
        if agent_claim is not None and agent_claim in claims:
            agent_id = claims[agent_claim]
            if isinstance(agent_id, str) and agent_id in org.agents:
                return Identity("agent", agent_id)
            log.info("oauth token refused: %s %r is not an agent of this organization", agent_claim, agent_id)
            return None
        email = claims.get("email")
        if claims.get("email_verified") is False:
            log.info("oauth token refused: email %r is not verified", email)
            return None
        found = None
        if isinstance(email, str):
            found = org.identity_for_person(email) or (
                Identity("person", email) if org.knows_person(email) else None
            )
        if found is None:
            log.info("oauth token refused: email %r is not a person of this organization", email)
        return found
