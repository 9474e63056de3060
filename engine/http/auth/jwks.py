"""The identity provider's signing keys, kept current without a restart.

A key set from `jwks_file` is fixed. One from `jwks_url` is fetched at startup and again when a
token names a key id the set lacks (the provider rotated its keys), at most once per
`REFRESH_SECONDS` so tokens with made-up key ids cannot make the server hammer the provider; and
when the set is older than `MAX_AGE_SECONDS`, so a key the provider withdrew stops being trusted.
A failed fetch keeps the keys already held. PyJWT's `PyJWKClient` does the fetching (in a thread:
it blocks).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import jwt

from engine.org import ConfigError

log = logging.getLogger("apc.oauth")

SIGNING_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
"""Public-key algorithms only: a shared-secret (`HS*`) or `none` token is never accepted."""
FETCH_SECONDS = 10.0
REFRESH_SECONDS = 30.0
MAX_AGE_SECONDS = 300.0


class KeySet:
    def __init__(
        self,
        keys: list[jwt.PyJWK],
        fetch: Callable[[], Any] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._keys = keys
        self._fetch = fetch
        self._clock = clock
        self._fetched_at = clock()
        self._lock = asyncio.Lock()
        self.fetches = 1 if fetch is not None else 0
        """How many times the set was fetched (startup included)."""

    @classmethod
    def from_jwks(cls, jwks: Any) -> KeySet:
        """A fixed set (from `jwks_file`)."""
        return cls(_checked(jwks))

    @classmethod
    async def from_url(cls, url: str, *, clock: Callable[[], float] = time.monotonic) -> KeySet:
        """The set at `url`, fetched now; a failure is a ConfigError (the server does not start)."""
        client = jwt.PyJWKClient(url, cache_jwk_set=False, timeout=FETCH_SECONDS)
        try:
            jwks = await asyncio.to_thread(client.fetch_data)
        except jwt.PyJWKClientError as exc:
            raise ConfigError(f"oauth.jwks_url: cannot fetch the key set ({type(exc).__name__})") from None
        return cls(_checked(jwks), client.fetch_data, clock=clock)

    async def key_for(self, kid: str | None) -> jwt.PyJWK | None:
        """The key a token's `kid` names (the only key, when the token names none and there is one)."""
        if self._fetch is not None and self._clock() - self._fetched_at >= MAX_AGE_SECONDS:
            await self._refresh("the key set is older than its maximum age")
        key = self._find(kid)
        if key is None and kid is not None and self._fetch is not None:
            if self._clock() - self._fetched_at >= REFRESH_SECONDS:
                await self._refresh(f"no key for kid {kid!r}")
                key = self._find(kid)
            else:
                log.info("oauth: no key for kid %r; the key set was fetched too recently to fetch again", kid)
        return key

    def _find(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            return self._keys[0] if len(self._keys) == 1 else None
        return next((k for k in self._keys if k.key_id == kid), None)

    async def _refresh(self, why: str) -> None:
        assert self._fetch is not None
        fetched_at = self._fetched_at
        async with self._lock:
            if self._fetched_at != fetched_at:
                return
            self._fetched_at = self._clock()
            self.fetches += 1
            try:
                keys = _checked(await asyncio.to_thread(self._fetch))
            except (jwt.PyJWKClientError, ConfigError) as exc:
                log.warning(
                    "oauth: fetching the key set again (%s) failed, keeping the old keys: %s", why, exc
                )
                return
            log.info("oauth: key set fetched again (%s): %d keys", why, len(keys))
            self._keys = keys


def _checked(jwks: Any) -> list[jwt.PyJWK]:
    if not isinstance(jwks, dict):
        raise ConfigError("oauth: the key set is not a JWKS object")
    keys = signing_keys(jwks)
    if not keys:
        raise ConfigError("oauth: the key set holds no public signing key")
    return keys


def signing_keys(jwks: dict[str, Any]) -> list[jwt.PyJWK]:
    """The usable public signing keys of a key set; others (encryption, symmetric, unknown) are skipped."""
    found: list[jwt.PyJWK] = []
    entries = jwks.get("keys")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWTError:
            continue
        if key.algorithm_name in SIGNING_ALGORITHMS:
            found.append(key)
    return found
