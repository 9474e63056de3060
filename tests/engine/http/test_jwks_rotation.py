"""An identity provider rotates its signing keys: the server fetches the key set again on an unknown
`kid` (at most once per 30 s), and when the set has aged, and keeps its keys when a fetch fails."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine.core import Engine
from engine.http.app import RunningServer, serve_asgi, start_server
from engine.http.auth import OAuthVerifier
from engine.http.auth.jwks import MAX_AGE_SECONDS, REFRESH_SECONDS, KeySet
from engine.org import ConfigError, OAuthConfig
from tests.engine.http.http_support import MIRA
from tests.support.rpc import post

ISSUER = "https://id.example.com"
AUDIENCE = "https://agents.example.com/mcp"


@dataclass
class Provider:
    """A JWKS endpoint whose published keys a test changes; it counts the fetches."""

    published: dict[str, rsa.RSAPrivateKey] = field(default_factory=dict)
    failing: bool = False
    fetches: int = 0

    async def jwks(self, request: Request) -> Response:
        self.fetches += 1
        if self.failing:
            return Response("down", status_code=503)
        keys = [
            {**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": kid, "use": "sig", "alg": "RS256"}
            for kid, key in self.published.items()
        ]
        return Response(json.dumps({"keys": keys}), media_type="application/json")


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def private_keys() -> dict[str, rsa.RSAPrivateKey]:
    return {kid: rsa.generate_private_key(public_exponent=65537, key_size=2048) for kid in "abc"}


@pytest.fixture
async def provider() -> AsyncIterator[tuple[Provider, str]]:
    state = Provider()
    running = await serve_asgi(Starlette(routes=[Route("/jwks.json", state.jwks)]))
    try:
        yield state, f"http://127.0.0.1:{running.port}/jwks.json"
    finally:
        await running.stop()


def token(key: rsa.RSAPrivateKey, kid: str) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 300, "email": MIRA}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


async def status(server: RunningServer, bearer: str) -> int:
    return (await post(server.url, bearer)).status_code


async def test_a_rotated_key_is_fetched_on_its_first_token_and_made_up_kids_are_rate_limited(
    engine: Engine, provider: tuple[Provider, str], private_keys: dict[str, Any]
) -> None:
    idp, url = provider
    idp.published = {"a": private_keys["a"]}
    clock = Clock()
    keys = await KeySet.from_url(url, clock=clock)
    verifier = OAuthVerifier(OAuthConfig(ISSUER, AUDIENCE, jwks_url=url), keys)
    server = await start_server(engine, oauth=verifier)
    try:
        assert await status(server, token(private_keys["a"], "a")) == 200
        assert idp.fetches == 1

        idp.published = {"b": private_keys["b"]}
        clock.now += REFRESH_SECONDS
        assert await status(server, token(private_keys["b"], "b")) == 200, "rotated in without a restart"
        assert idp.fetches == 2

        assert await status(server, token(private_keys["c"], "c")) == 401
        assert await status(server, token(private_keys["c"], "made-up")) == 401
        assert await status(server, token(private_keys["a"], "a")) == 401, "rotated out"
        assert idp.fetches == 2, "unknown kids within 30 s of a fetch fetch nothing"

        idp.published = {"b": private_keys["b"], "c": private_keys["c"]}
        clock.now += REFRESH_SECONDS
        assert await status(server, token(private_keys["c"], "c")) == 200
        assert idp.fetches == 3

        idp.published = {"b": private_keys["b"]}
        clock.now += MAX_AGE_SECONDS
        assert await status(server, token(private_keys["c"], "c")) == 401, "an aged set is fetched again"
        assert idp.fetches == 4

        idp.failing = True
        clock.now += MAX_AGE_SECONDS
        assert await status(server, token(private_keys["b"], "b")) == 200, "a failed fetch keeps the keys"
        assert (idp.fetches, keys.fetches) == (5, 5)
    finally:
        await server.stop()


async def test_an_unreachable_key_set_at_startup_is_a_configuration_error(
    provider: tuple[Provider, str],
) -> None:
    idp, url = provider
    idp.failing = True
    with pytest.raises(ConfigError) as caught:
        await OAuthVerifier.from_config(OAuthConfig(ISSUER, AUDIENCE, jwks_url=url))
    assert str(caught.value) == "oauth.jwks_url: cannot fetch the key set (PyJWKClientConnectionError)"
    idp.failing = False
    with pytest.raises(ConfigError) as empty:
        await OAuthVerifier.from_config(OAuthConfig(ISSUER, AUDIENCE, jwks_url=url))
    assert str(empty.value) == "oauth: the key set holds no public signing key"
