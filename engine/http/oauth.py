"""OAuth 2.1 resource server: the org's identity provider vouches for a caller with a signed JWT.

Spec §4 puts the tools behind OAuth bearer tokens. The endpoint accepts an access token only when its
signature verifies against the issuer's published keys, it has not expired, and it names this server
as audience and the configured issuer. The token then maps to exactly one identity the org config
knows: an agent by `agent_claim` (checked first, so an agent client never passes as a person, spec §6
rule 4), otherwise a person by `email` (listed in `[[people]]` or as a group member). Why a token was refused is logged, never told to the caller.

The `[oauth]` table lives in the org config TOML; `engine.auth.OrgConfig.load` reads the file and
hands the table to `parse_oauth`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jwt

from engine.auth import ConfigError, OrgConfig
from engine.http.hosts import is_loopback
from engine.http.jwks import KeySet
from engine.identity import Identity

log = logging.getLogger("apc.oauth")

OAUTH_KEYS = frozenset({"issuer", "audience", "jwks_file", "jwks_url", "agent_claim"})
LEEWAY_SECONDS = 30
"""Clock skew tolerated between the identity provider and this server on `exp`, `nbf` and `iat`."""


@dataclass(frozen=True)
class OAuthConfig:
    issuer: str
    audience: str
    jwks_file: Path | None = None
    jwks_url: str | None = None
    agent_claim: str | None = None


def load_org(path: Path) -> tuple[OrgConfig, OAuthConfig | None]:
    """The org config and its `[oauth]` table, from one TOML file (`OrgConfig.load` reads both)."""
    org = OrgConfig.load(path)
    return org, org.oauth


def parse_oauth(raw: object, *, base: Path) -> OAuthConfig:
    """Check the `[oauth]` table; a relative `jwks_file` is relative to the config file's folder."""
    if not isinstance(raw, dict):
        raise ConfigError("oauth: expected a table ([oauth])")
    for key in raw:
        if key not in OAUTH_KEYS:
            raise ConfigError(f"oauth.{key}: unknown key (allowed: {', '.join(sorted(OAUTH_KEYS))})")
    values: dict[str, str] = {}
    for key in ("issuer", "audience", "jwks_file", "jwks_url", "agent_claim"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"oauth.{key}: expected a non-empty string")
        values[key] = value.strip()
    for key in ("issuer", "audience"):
        if key not in values:
            raise ConfigError(f"oauth.{key}: required, a non-empty string")
    if ("jwks_file" in values) == ("jwks_url" in values):
        raise ConfigError("oauth.jwks_file: give exactly one of jwks_file and jwks_url")
    if not _secure_url(values["issuer"]):
        raise ConfigError("oauth.issuer: expected an https:// URL")
    url = values.get("jwks_url")
    if url is not None and not _secure_url(url):
        raise ConfigError("oauth.jwks_url: expected an https:// URL")
    jwks_file = values.get("jwks_file")
    return OAuthConfig(
        issuer=values["issuer"],
        audience=values["audience"],
        jwks_file=None if jwks_file is None else (base / jwks_file).resolve(),
        jwks_url=url,
        agent_claim=values.get("agent_claim"),
    )


def _secure_url(url: str) -> bool:
    """https, or http to this machine (an identity provider run locally for development)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if not host:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host))


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
