"""The org config (TOML): what it accepts, errors that name the key, token lookup."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity
from engine.org import ConfigError, OrgConfig, ServerSettings
from tests.engine.engine_support import SCREENER, call, err, make_org

GOOD = """
[server]
lease_seconds = 300
run_data_bytes = 4096
max_upload_bytes = 1024

[[groups]]
id = "g_finance"
members = ["mira@example.com"]

[[people]]
email = "mira@example.com"
token = "dev-token-mira"

[[people]]
email = "ops@example.com"
token_sha256 = "{ops_digest}"
operator = true

[[agents]]
id = "a_screener"
token = "dev-token-screener"

[[processes]]
path = "procs/three"
bind = {{ approver = "g_finance" }}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "org.toml"
    path.write_text(text)
    return path


def test_a_full_config_loads(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"dev-token-ops").hexdigest()
    org = OrgConfig.load(write(tmp_path, GOOD.format(ops_digest=digest)))
    assert org.server == ServerSettings(lease_seconds=300, run_data_bytes=4096, max_upload_bytes=1024)
    assert org.groups == {"g_finance": ("mira@example.com",)}
    assert org.identity_for_token("dev-token-mira") == Identity("person", "mira@example.com", False)
    assert org.identity_for_token("dev-token-ops") == Identity("person", "ops@example.com", True)
    assert org.identity_for_token("dev-token-screener") == Identity("agent", "a_screener", False)
    assert org.identity_for_token("dev-token-nobody") is None
    assert [(p.path, p.bind) for p in org.processes] == [
        ((tmp_path / "procs/three").resolve(), {"approver": "g_finance"})
    ]
    assert org.operators() == ["ops@example.com"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[server]\nlease = 5\n", "server.lease: unknown key"),
        ("[server]\nlease_seconds = '5'\n", "server.lease_seconds: expected a positive integer"),
        ("[server]\nsecrets_file = 5\n", "server.secrets_file: expected a path"),
        ("[server]\nsecrets_file = ' '\n", "server.secrets_file: expected a path"),
        ("[[people]]\nemail = 'x'\n", "people[0].email: not an email address"),
        (
            "[[people]]\nemail = 'a@b.co'\ntoken = 'short'\n",
            "people[0].token: expected a string of at least 8",
        ),
        ("[[people]]\nemail = 'a@b.co'\noperator = 'yes'\n", "people[0].operator: expected true or false"),
        ("[[agents]]\nid = 'a'\ntoken_sha256 = 'zz'\n", "agents[0].token_sha256: expected 64 hex digits"),
        (
            "[[groups]]\nid = 'g'\nmembers = 'a@b.co'\n",
            "groups[0].members: expected a list of email addresses",
        ),
        ("[[groups]]\nid = 'operators'\n", "groups.operators: 'operators' is reserved"),
        ("[[processes]]\nbind = {}\n", "processes[0].path: required"),
        ("colour = 'blue'\n", "colour: unknown key"),
        (
            "[[agents]]\nid='a'\ntoken='same-token'\n[[agents]]\nid='b'\ntoken='same-token'\n",
            "tokens: two identities",
        ),
        ("people = 3\n", "people: expected an array of tables"),
        ("[server\n", "not valid TOML"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        OrgConfig.load(write(tmp_path, text))
    assert message in str(caught.value)


async def test_config_processes_publish_at_start(tmp_path: Path) -> None:
    folder = tmp_path / "procs" / "approval"
    folder.mkdir(parents=True)
    (folder / "PROCESS.md").write_text(
        "---\nname: approval\ndescription: d\nsteps:\n  - id: a\n    person: approver\n    approve: ok?\n"
        "  - id: done\n    finish: done\n---\n"
    )
    text = (
        "[[groups]]\nid = 'g_finance'\nmembers = ['mira@example.com']\n"
        "[[processes]]\npath = 'procs/approval'\nbind = { approver = 'g_finance' }\n"
    )
    org = OrgConfig.load(write(tmp_path, text))
    engine = await Engine.open(tmp_path / "data", org, clock=ManualClock())
    try:
        [result] = await engine.publish_config_processes()
        assert (result.ok, result.name, result.version, result.created) == (True, "approval", 1, True)
        [again] = await engine.publish_config_processes()
        assert (again.version, again.created) == (1, False)
    finally:
        await engine.close()


async def test_an_unexpected_failure_is_a_retry_without_details(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await Engine.open(tmp_path / "data", make_org(), clock=ManualClock())
    try:

        async def broken(*_args: object) -> None:
            raise RuntimeError("SELECT secret FROM /var/lib/db")

        monkeypatch.setattr(engine.store, "list_runs", broken)
        reply = await call(engine, SCREENER, "list_runs")
        assert reply == {"ok": False, "error": {"code": "retry", "message": "internal error"}}
        err(reply, "retry")
    finally:
        await engine.close()
