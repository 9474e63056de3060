"""OAuth 2.1 resource server: JWT access tokens from the org's identity provider, verified and mapped."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from engine.core import Engine
from engine.http.app import RunningServer, start_server
from engine.http.auth import OAuthVerifier
from engine.org import ConfigError, OAuthConfig, OrgConfig
from tests.engine.http.http_support import AGENT, LENA, MIRA, OMAR, err, ok, rid
from tests.support.mcp import McpCaller
from tests.support.ports import free_port
from tests.support.rpc import headers, tool_call

ISSUER = "https://id.example.com"
AUDIENCE = "https://agents.example.com/mcp"
KID = "key-2026"


@pytest.fixture(scope="module")
def keys() -> tuple[rsa.RSAPrivateKey, rsa.RSAPrivateKey]:
    """The issuer's signing key, and a stranger's key."""
    return (
        rsa.generate_private_key(public_exponent=65537, key_size=2048),
        rsa.generate_private_key(public_exponent=65537, key_size=2048),
    )


@pytest.fixture
def jwks_file(tmp_path: Path, keys: tuple[rsa.RSAPrivateKey, rsa.RSAPrivateKey]) -> Path:
    public = RSAAlgorithm.to_jwk(keys[0].public_key(), as_dict=True)
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]}))
    return path


def token(key: rsa.RSAPrivateKey, kid: str = KID, **overrides: Any) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "u-1", "iat": now, "exp": now + 300, "email": MIRA}
    claims.update(overrides)
    return jwt.encode(
        {k: v for k, v in claims.items() if v is not None}, key, algorithm="RS256", headers={"kid": kid}
    )


@pytest.fixture
async def oauth_server(engine: Engine, jwks_file: Path) -> AsyncIterator[RunningServer]:
    config = OAuthConfig(issuer=ISSUER, audience=AUDIENCE, jwks_file=jwks_file, agent_claim="agent_id")
    verifier = await OAuthVerifier.from_config(config)
    port = free_port()
    running = await start_server(engine, port=port, oauth=verifier, public_url=f"http://127.0.0.1:{port}")
    try:
        yield running
    finally:
        await running.stop()


async def test_a_person_token_acts_as_that_person(oauth_server: RunningServer, keys: Any) -> None:
    async with McpCaller(oauth_server.url, token(keys[0])) as mira:
        view = ok(
            await mira.call(
                "start_run", {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()}
            ),
            "start_run",
        )
        claim = await mira.call(
            "claim", {"runId": view["run"]["id"], "stepId": "check_vendor", "requestId": rid()}
        )
    assert view["run"]["startedBy"] == MIRA
    err(claim, "forbidden")


async def test_a_group_member_without_a_people_entry_is_a_person(
    oauth_server: RunningServer, keys: Any
) -> None:
    async with McpCaller(oauth_server.url, token(keys[0], email=OMAR)) as omar:
        view = ok(
            await omar.call(
                "start_run", {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()}
            ),
            "start_run",
        )
    assert view["run"]["startedBy"] == OMAR


async def test_the_agent_claim_wins_over_an_email(oauth_server: RunningServer, keys: Any) -> None:
    async with McpCaller(oauth_server.url, token(keys[0], agent_id=AGENT, email=LENA)) as agent:
        view = ok(
            await agent.call(
                "start_run", {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()}
            ),
            "start_run",
        )
        claimed = await agent.call(
            "claim", {"runId": view["run"]["id"], "stepId": "check_vendor", "requestId": rid()}
        )
    assert view["run"]["startedBy"] == AGENT
    assert ok(claimed, "claim")["step"]["id"] == "check_vendor"


async def test_tokens_that_do_not_verify_or_map_are_401(oauth_server: RunningServer, keys: Any) -> None:
    issuer_key, stranger_key = keys
    now = int(time.time())
    refused = {
        "bad signature": token(stranger_key),
        "expired": token(issuer_key, iat=now - 7200, exp=now - 3600),
        "wrong audience": token(issuer_key, aud="https://other.example.com/mcp"),
        "wrong issuer": token(issuer_key, iss="https://evil.example.com"),
        "no expiry": token(issuer_key, exp=None),
        "unknown key id": token(issuer_key, kid="key-1999"),
        "unknown person": token(issuer_key, email="nobody@example.com"),
        "unverified email": token(issuer_key, email_verified=False),
        "unknown agent": token(issuer_key, agent_id="a_intruder"),
        "shared secret": jwt.encode(
            {"iss": ISSUER, "aud": AUDIENCE, "exp": now + 300, "email": MIRA},
            "x" * 32,
            algorithm="HS256",
            headers={"kid": KID},
        ),
        "unsigned": jwt.encode(
            {"iss": ISSUER, "aud": AUDIENCE, "exp": now + 300, "email": MIRA}, "", algorithm="none"
        ),
    }
    statuses = {}
    async with httpx.AsyncClient() as client:
        for why, bearer in refused.items():
            response = await client.post(
                oauth_server.url, json=tool_call("describe"), headers=headers(bearer)
            )
            statuses[why] = response.status_code
    assert statuses == dict.fromkeys(refused, 401)


async def test_401_points_at_the_protected_resource_metadata(oauth_server: RunningServer) -> None:
    base = f"http://127.0.0.1:{oauth_server.port}"
    async with httpx.AsyncClient() as client:
        refused = await client.post(oauth_server.url, json={})
        metadata = await client.get(f"{base}/.well-known/oauth-protected-resource/mcp")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == (
        'Bearer error="invalid_token", error_description="Authentication required", '
        f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
    )
    assert metadata.status_code == 200
    body = metadata.json()
    assert (body["resource"], body["authorization_servers"]) == (f"{base}/mcp", [ISSUER])


ORG = """
[[groups]]
id = "g_finance"
members = ["mira@example.com"]

[[people]]
email = "mira@example.com"

[[agents]]
id = "a_screener"

[oauth]
issuer = "https://id.example.com"
audience = "https://agents.example.com/mcp"
{jwks}
agent_claim = "agent_id"
"""


def write_org(tmp_path: Path, jwks: str = 'jwks_file = "keys/jwks.json"', extra: str = "") -> Path:
    path = tmp_path / "org.toml"
    path.write_text(ORG.replace("{jwks}", jwks) + extra)
    return path


def test_the_oauth_table_is_read_beside_the_org(tmp_path: Path) -> None:
    org = OrgConfig.load(write_org(tmp_path))
    oauth = org.oauth
    assert list(org.agents) == [AGENT]
    assert oauth == OAuthConfig(
        issuer=ISSUER,
        audience=AUDIENCE,
        jwks_file=(tmp_path / "keys" / "jwks.json").resolve(),
        jwks_url=None,
        agent_claim="agent_id",
    )


def test_an_org_without_oauth_has_none(tmp_path: Path) -> None:
    path = tmp_path / "org.toml"
    path.write_text(ORG.split("[oauth]")[0])
    assert OrgConfig.load(path).oauth is None


@pytest.mark.parametrize(
    ("jwks", "extra", "message"),
    [
        (
            'jwks_file = "a.json"\njwks_url = "https://id.example.com/jwks"',
            "",
            "line 15: oauth.jwks_file: give exactly one of jwks_file and jwks_url",
        ),
        ("", "", "oauth.jwks_file: give exactly one of jwks_file and jwks_url"),
        ('jwks_url = "http://id.example.com/jwks"', "", "line 15: oauth.jwks_url: expected an https:// URL"),
        (
            'jwks_file = "a.json"\nscopes = ["x"]',
            "",
            "line 16: oauth.scopes: unknown key (allowed: agent_claim, audience, issuer, jwks_file, jwks_url)",
        ),
        ('jwks_file = ""', "", "line 15: oauth.jwks_file: expected a non-empty string"),
        (
            'jwks_file = "a.json"',
            "\n[[people]]\nemail = 7\n",
            "people[1].email: required, a non-empty string",
        ),
    ],
)
def test_a_bad_oauth_table_names_the_key(tmp_path: Path, jwks: str, extra: str, message: str) -> None:
    path = write_org(tmp_path, jwks, extra)
    with pytest.raises(ConfigError) as caught:
        OrgConfig.load(path)
    assert str(caught.value) == f"{path}: {message}"


def test_a_missing_issuer_is_named(tmp_path: Path) -> None:
    path = tmp_path / "org.toml"
    path.write_text('[oauth]\naudience = "x"\njwks_file = "k.json"\n')
    with pytest.raises(ConfigError) as caught:
        OrgConfig.load(path)
    assert str(caught.value) == f"{path}: oauth.issuer: required, a non-empty string"


async def test_a_key_set_without_public_signing_keys_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQ", "kid": "s"}]}))
    with pytest.raises(ConfigError) as caught:
        await OAuthVerifier.from_config(OAuthConfig(ISSUER, AUDIENCE, jwks_file=path))
    assert str(caught.value) == "oauth: the key set holds no public signing key"


async def test_an_unreadable_key_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigError) as caught:
        await OAuthVerifier.from_config(OAuthConfig(ISSUER, AUDIENCE, jwks_file=missing))
    assert str(caught.value) == f"oauth.jwks_file: cannot read {missing} (No such file or directory)"


@pytest.mark.parametrize(
    ("issuer", "message"),
    [
        ("id.example.com", "oauth.issuer: expected an https:// URL"),
        ("http://id.example.com", "oauth.issuer: expected an https:// URL"),
        ("http://[::1", "oauth.issuer: expected an https:// URL"),
    ],
)
def test_the_issuer_must_be_an_https_url(tmp_path: Path, issuer: str, message: str) -> None:
    path = tmp_path / "org.toml"
    path.write_text(f'[oauth]\nissuer = "{issuer}"\naudience = "x"\njwks_file = "k.json"\n')
    with pytest.raises(ConfigError) as caught:
        OrgConfig.load(path)
    assert str(caught.value) == f"{path}: line 2: {message}"
