"""`apc`: options, delegation to the engine's commands, no Textual at import, and the embedded start."""

from __future__ import annotations

import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from console.cli import main
from console.client.remote import RemoteClient
from console.embedded import AGENT_ID, OPERATOR_EMAIL, ensure_org, open_embedded, sample_roles
from tests.support.processes import write_process

REPO = Path(__file__).resolve().parents[2]


def test_importing_the_command_line_imports_no_textual() -> None:
    probe = "import sys, console.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_other_commands_go_to_the_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_process(
        tmp_path,
        "---\nname: tiny\ndescription: One step.\nsteps:\n  - id: done\n    finish: ok\n---\nBody.\n",
    )
    assert main(["validate", str(folder)]) == 0
    assert "tiny" in capsys.readouterr().out
    assert main(["no-such-command"]) == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--server", "http://x/mcp"], "apc: error: --server needs --token\n"),
        (["--token", "t"], "apc: error: --token is for --server\n"),
        (
            ["--server", "http://x/mcp", "--token", "t", "--data", "d"],
            "apc: error: --data is for the embedded engine, not --server\n",
        ),
    ],
)
def test_option_mistakes_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == message


def test_help_lists_the_console_options_and_every_other_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for text in (
        "--server URL",
        "--token TOKEN",
        "--data DIR",
        "--read-only",
        "  demo ",
        "  validate ",
        "  serve ",
    ):
        assert text in out, text


def test_first_start_writes_a_private_org_with_a_group_per_sample_role(tmp_path: Path) -> None:
    org, created = ensure_org(tmp_path / "data")
    path = tmp_path / "data" / "org.toml"
    assert created and stat.S_IMODE(path.stat().st_mode) == 0o600
    roles = sample_roles(REPO / "sample_processes")
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
