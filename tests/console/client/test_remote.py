"""Remote mode's client: one SDK session, `--server` as base or `/mcp` URL, who the token is, and a
wrong URL or token ending `apc` at start with exit status 2."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import jwt
import pytest

from apc.cli import main
from console.app import ApcApp
from console.client.base import Who
from console.client.connection import ConnectionFailed
from console.client.remote import RemoteClient, connect, endpoint_urls, token_identity, token_who
from console.launch import EXIT_USAGE
from console.live.session import Session
from console.settings.config import ConsoleConfig
from engine.clock import ManualClock
from engine.core import Engine
from engine.http.app import RunningServer, start_server
from engine.http.standard_extras import standard_extras
from tests.console.console_support import open_engine, shown
from tests.support.org import MIRA, OPS, token
from tests.support.ports import free_port

OPS_TOKEN = token(OPS)
MIRA_TOKEN = token(MIRA)


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[Engine]:
    port = free_port()
    opened = await open_engine(tmp_path, ManualClock(), f"http://127.0.0.1:{port}")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def server(engine: Engine) -> AsyncIterator[RunningServer]:
    running = await start_server(engine, port=0, extra_tools=standard_extras(engine))
    try:
        yield running
    finally:
        await running.stop()


def base_of(server: RunningServer) -> str:
    return server.url.removesuffix("/mcp")


@pytest.mark.parametrize(
    ("given", "tried"),
    [
        ("http://h:8765", ["http://h:8765/mcp"]),
        ("http://h:8765/", ["http://h:8765/mcp"]),
        ("http://h:8765/mcp", ["http://h:8765/mcp"]),
        ("http://h:8765/mcp/", ["http://h:8765/mcp"]),
        (" https://h/apc ", ["https://h/apc", "https://h/apc/mcp"]),
        (
            "https://h/other/endpoint?x=1",
            ["https://h/other/endpoint?x=1", "https://h/other/endpoint/mcp?x=1"],
        ),
    ],
)
def test_the_server_url_may_be_the_base_or_the_mcp_url(given: str, tried: list[str]) -> None:
    assert endpoint_urls(given) == tried


def test_without_apc_whoami_the_token_says_who_it_is() -> None:
    signed = jwt.encode({"sub": "u_1", "email": "mira@example.com"}, "k" * 32, algorithm="HS256")
    assert token_who(signed) == Who("person", "mira@example.com", "mira@example.com", False, confirmed=False)
    assert token_who("opaque-token-9876") == Who("person", "token …9876", None, False, confirmed=False)


@pytest.mark.parametrize("suffix", ["", "/", "/mcp", "/mcp/"])
async def test_connect_finds_the_endpoint_and_asks_who_the_token_is(
    server: RunningServer, suffix: str
) -> None:
    client = await connect(base_of(server) + suffix, OPS_TOKEN)
    try:
        assert client.url == server.url
        assert await client.whoami() == Who("person", "ops@example.com", "ops@example.com", True)
        assert (client.identity.kind, client.identity.id, client.identity.operator) == (
            "person",
            "ops@example.com",
            True,
        )
        described = await client.describe()
        assert described["ok"] and described["data"]["protocol"] == "agentprocess"
        assert client.connection.opened == 1, "one session for every call"
    finally:
        await client.close()


async def test_a_server_without_apc_whoami_falls_back_to_the_token(engine: Engine) -> None:
    plain = await start_server(engine, port=0)
    try:
        client = await connect(plain.url, MIRA_TOKEN)
        try:
            assert await client.whoami() == Who("person", "token …0001", None, False, confirmed=False)
        finally:
            await client.close()
    finally:
        await plain.stop()


async def test_a_refused_token_and_a_wrong_path_are_connection_failures(server: RunningServer) -> None:
    with pytest.raises(ConnectionFailed) as refused:
        await connect(server.url, "not-a-token")
    assert (refused.value.status, refused.value.refused) == (401, True)
    assert str(refused.value) == f"{server.url} refused the token (HTTP 401)"
    with pytest.raises(ConnectionFailed) as missing:
        await connect(base_of(server) + "/nope", OPS_TOKEN)
    assert str(missing.value) == f"{base_of(server)}/nope/mcp is not an MCP endpoint (HTTP 404)"


async def test_apc_ends_at_start_with_status_2_and_one_clear_line(
    server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    async def run(*argv: str) -> tuple[int, str]:
        status = await asyncio.to_thread(main, list(argv))
        return status, capsys.readouterr().err

    assert await run("--server", server.url, "--token", "not-a-token") == (
        EXIT_USAGE,
        f"apc: error: {server.url} refused the token (HTTP 401) (check --token or $APC_TOKEN)\n",
    )
    assert await run("--server", base_of(server) + "/nope", "--token", OPS_TOKEN) == (
        EXIT_USAGE,
        f"apc: error: {base_of(server)}/nope/mcp is not an MCP endpoint (HTTP 404)"
        " (--server takes the server's base URL or its /mcp URL)\n",
    )
    closed = free_port()
    status, said = await run("--server", f"http://127.0.0.1:{closed}", "--token", OPS_TOKEN)
    assert (status, said) == (
        EXIT_USAGE,
        f"apc: error: cannot reach http://127.0.0.1:{closed}/mcp: ConnectError: All connection attempts failed\n",
    )


async def test_the_session_reconnects_after_the_server_comes_back(engine: Engine) -> None:
    port = free_port()
    running = await start_server(engine, port=port, extra_tools=standard_extras(engine))
    client = RemoteClient(running.url, OPS_TOKEN)
    try:
        assert (await client.describe())["ok"]
        await running.stop()
        lost = await client.describe()
        assert lost == {
            "ok": False,
            "error": {"code": "retry", "message": f"lost the connection to {running.url}"},
        }
        running = await start_server(engine, port=port, extra_tools=standard_extras(engine))
        assert (await client.describe())["ok"]
        assert client.connection.opened == 2
    finally:
        await client.close()
        await running.stop()


async def test_the_header_shows_the_email_and_the_operator_flag_from_whoami(server: RunningServer) -> None:
    who = Who("person", "ops@example.com", "ops@example.com", True)
    client = RemoteClient(server.url, OPS_TOKEN, who=who)
    app = ApcApp(
        Session(client, f"remote · {server.url}", close=client.close),
        live=False,
        cursor_blink=False,
        config=ConsoleConfig(),
    )
    async with app.run_test(size=(160, 48)):
        await app.ready.wait()
        assert shown(app, "#status").startswith(
            f" ops@example.com (person, operator) · remote · {server.url}"
        )


def test_a_remote_token_is_labelled_by_its_claims_or_its_last_characters() -> None:
    import jwt

    assert token_identity("apc_abcdefgh1234").id == "token …1234"
    signed = jwt.encode({"sub": "u_1", "email": "mira@example.com"}, "k" * 32, algorithm="HS256")
    assert token_identity(signed).id == "mira@example.com"
