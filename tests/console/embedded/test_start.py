"""The embedded start: the first start's private org, the samples published once (and the org repaired
when there were none), the port asked for, a data folder that is not ours, a session that cannot open."""

from __future__ import annotations

import socket
import stat
import tomllib
from pathlib import Path

import pytest

from console.app import ApcApp
from console.client.remote import RemoteClient
from console.embedded.launch import AGENT_ID, OPERATOR_EMAIL, ensure_org, open_embedded, sample_roles
from console.embedded.samples import SAMPLES, no_samples
from console.live.session import OpenFailed, Session
from engine.core import DB_FILE


def test_first_start_writes_a_private_org_with_a_group_per_sample_role(tmp_path: Path) -> None:
    org, created = ensure_org(tmp_path / "data")
    path = tmp_path / "data" / "org.toml"
    assert created and stat.S_IMODE(path.stat().st_mode) == 0o600
    roles = sample_roles(SAMPLES)
    assert sorted(org.groups) == sorted(roles)
    assert all(members == (OPERATOR_EMAIL,) for members in org.groups.values())
    assert org.people[OPERATOR_EMAIL].operator
    raw = tomllib.loads(path.read_text())
    assert [a["id"] for a in raw["agents"]] == [AGENT_ID]
    again, created_again = ensure_org(tmp_path / "data")
    assert not created_again and again.groups == org.groups


async def test_the_embedded_session_publishes_the_samples_and_serves_the_endpoint(tmp_path: Path) -> None:
    session = await open_embedded(tmp_path / "data")
    try:
        assert session.endpoint is not None
        assert session.endpoint.url.startswith("http://127.0.0.1:") and session.endpoint.url.endswith("/mcp")
        assert session.notices[0] == (
            f"MCP endpoint {session.endpoint.url}: the agent token and a client config are in the Endpoint tab (4)."
        )
        assert session.notices[1].startswith("Published ")
        assert (session.client.identity.id, session.client.identity.operator) == (OPERATOR_EMAIL, True)
        listed = await session.client.list_processes()
        assert listed["ok"]
        names = {p["name"] for p in listed["data"]["items"]}
        assert {"purchase-order-approval", "new-hire-laptop"} <= names
        agent = RemoteClient(session.endpoint.url, session.endpoint.token)
        try:
            described = await agent.describe()
            assert described["ok"] and described["data"]["protocol"] == "agentprocess"
        finally:
            await agent.close()
        config = session.endpoint.client_config()
        assert f'"url": "{session.endpoint.url}"' in config
        assert f'"Authorization": "Bearer {session.endpoint.token}"' in config
    finally:
        assert session.close is not None
        await session.close()


async def test_a_start_without_samples_says_so_and_the_next_one_repairs_the_org(tmp_path: Path) -> None:
    data, missing = tmp_path / "data", tmp_path / "not-installed"
    session = await open_embedded(data, samples=missing, port=0)
    try:
        assert session.notices[1:] == [no_samples(missing)]
        listed = await session.client.list_processes()
        assert listed["ok"] and listed["data"]["items"] == []
    finally:
        assert session.close is not None
        await session.close()
    written = tomllib.loads((data / "org.toml").read_text())
    assert "groups" not in written
    assert ensure_org(data)[1] is True, "repaired"
    repaired = tomllib.loads((data / "org.toml").read_text())
    assert [g["id"] for g in repaired["groups"]] == sample_roles(SAMPLES)
    assert (repaired["people"], repaired["agents"]) == (written["people"], written["agents"]), "tokens kept"
    assert stat.S_IMODE((data / "org.toml").stat().st_mode) == 0o600
    session = await open_embedded(data, port=0)
    try:
        assert session.notices[1] == "Published 7 sample processes."
        without_an_evaluator = ["content-moderation-appeal", "customer-refund", "data-deletion-request"]
        assert [n.split(":")[1].strip() for n in session.notices[2:]] == without_an_evaluator
        listed = await session.client.list_processes()
        assert listed["ok"] and len(listed["data"]["items"]) == 7
    finally:
        assert session.close is not None
        await session.close()
    assert ensure_org(data)[1] is False
    session = await open_embedded(data, port=0)
    try:
        assert session.notices[1:] == [], "published once"
    finally:
        assert session.close is not None
        await session.close()


async def test_the_embedded_endpoint_takes_the_port_asked_for(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        wanted = probe.getsockname()[1]
    session = await open_embedded(tmp_path / "data", port=wanted)
    try:
        assert session.endpoint is not None
        assert session.endpoint.url == f"http://127.0.0.1:{wanted}/mcp"
    finally:
        assert session.close is not None
        await session.close()


async def test_a_data_folder_that_is_not_ours_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / DB_FILE).write_bytes(b"not a database" * 100)
    with pytest.raises(OpenFailed) as failed:
        await open_embedded(data, port=0)
    assert str(failed.value) == f"{data / DB_FILE} is not an apc database: file is not a database"


async def test_the_console_ends_with_the_reason_when_its_session_cannot_be_opened() -> None:
    async def opener() -> Session:
        raise OpenFailed("engine.db is not an apc database: file is not a database")

    app = ApcApp(opener)
    exits: list[dict[str, object]] = []
    app_exit = app.exit

    def exit(**told: object) -> None:  # the message is printed once the app is gone: kept here too
        exits.append(told)
        app_exit(**told)  # type: ignore[arg-type]

    app.exit = exit  # type: ignore[method-assign,assignment]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
    assert exits == [
        {"return_code": 1, "message": "apc: error: engine.db is not an apc database: file is not a database"}
    ]
    assert app.return_code == 1
    assert app.session is None
