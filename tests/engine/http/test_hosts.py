"""DNS rebinding protection: `Host` and `Origin` must name this server, on every route."""

from __future__ import annotations

import httpx
import pytest

from engine.core import Engine
from engine.http.app import RunningServer, start_server
from engine.http.auth import security_settings
from engine.net import is_loopback
from tests.engine.http.http_support import AGENT_TOKEN
from tests.support.ports import free_port
from tests.support.rpc import headers, tool_call


async def post(url: str, **extra: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(url, json=tool_call("describe"), headers={**headers(AGENT_TOKEN), **extra})


async def test_loopback_names_and_origins_are_accepted(server: RunningServer) -> None:
    port = server.port
    accepted = [
        await post(server.url),
        await post(server.url, Host=f"localhost:{port}"),
        await post(server.url, Origin=f"http://127.0.0.1:{port}"),
        await post(server.url, Origin=f"http://localhost:{port}"),
    ]
    assert [r.status_code for r in accepted] == [200, 200, 200, 200]


@pytest.mark.parametrize(
    ("headers", "status", "text"),
    [
        ({"Host": "attacker.example"}, 421, "Invalid Host header"),
        ({"Host": "attacker.example:8765"}, 421, "Invalid Host header"),
        ({"Host": "127.0.0.1.attacker.example"}, 421, "Invalid Host header"),
        ({"Origin": "http://attacker.example"}, 403, "Invalid Origin header"),
        ({"Origin": "null"}, 403, "Invalid Origin header"),
    ],
)
async def test_a_foreign_host_or_origin_is_refused_on_loopback(
    server: RunningServer, headers: dict[str, str], status: int, text: str
) -> None:
    response = await post(server.url, **headers)
    assert (response.status_code, response.text) == (status, text)


async def test_the_file_route_checks_the_host_too(server: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.get(
            f"http://127.0.0.1:{server.port}/files/f_1?expires=1&sig=x", headers={"Host": "attacker.example"}
        )
    assert (response.status_code, response.text) == (421, "Invalid Host header")


async def test_a_public_bind_accepts_the_allowed_host_and_nothing_else(engine: Engine) -> None:
    port = free_port("0.0.0.0")
    running = await start_server(engine, "0.0.0.0", port, ["agents.example.com"])
    try:
        assert running.url == f"http://127.0.0.1:{port}/mcp"
        allowed = await post(
            running.url, Host=f"agents.example.com:{port}", Origin="https://agents.example.com"
        )
        bare_name = await post(running.url, Host="agents.example.com")
        other = await post(running.url, Host="attacker.example")
    finally:
        await running.stop()
    assert [allowed.status_code, bare_name.status_code, other.status_code] == [200, 200, 421]
    assert allowed.json()["result"]["structuredContent"]["ok"] is True


def test_settings_for_loopback_allow_only_loopback_names() -> None:
    settings = security_settings("127.0.0.1")
    assert settings.enable_dns_rebinding_protection is True
    assert settings.allowed_hosts == [
        "127.0.0.1",
        "127.0.0.1:*",
        "localhost",
        "localhost:*",
        "[::1]",
        "[::1]:*",
    ]
    assert settings.allowed_origins[:2] == ["http://127.0.0.1", "https://127.0.0.1"]
    assert len(settings.allowed_origins) == 12


def test_settings_for_a_specific_address_and_named_ports() -> None:
    settings = security_settings("10.0.0.5", ["Agents.Example.com:8443", "fd00::7"])
    assert settings.allowed_hosts[6:] == [
        "10.0.0.5",
        "10.0.0.5:*",
        "agents.example.com:8443",
        "[fd00::7]",
        "[fd00::7]:*",
    ]
    assert "https://agents.example.com:8443" in settings.allowed_origins
    assert "https://agents.example.com" not in settings.allowed_origins


def test_a_star_turns_the_checks_off() -> None:
    assert security_settings("0.0.0.0", ["*"]).enable_dns_rebinding_protection is False


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("agents.example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
