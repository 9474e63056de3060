"""`apc conform` as a command: help, usage errors, config errors, setup errors, --list, --print-setup."""

from __future__ import annotations

import io
import socket
import tomllib
from pathlib import Path

import pytest

from apc.cli import main as apc
from conform import config as conform_config
from conform.catalog import earlier, shipped
from conform.cli import EXIT_SETUP, EXIT_USAGE, main
from conform.registry import GROUPS
from conform.suite import checks
from engine.core import Engine
from engine.org import OrgConfig


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out), out.getvalue()


def test_help_names_the_exit_codes_groups_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert apc(["conform", "--help"]) == 0
    text = capsys.readouterr().out
    for part in (
        "exit status:",
        "0  no check failed",
        "1  at least one check failed",
        "2  usage",
        "3  the run could not start",
        "examples:",
        "apc conform --self",
        "--print-setup",
        "--trace",
    ):
        assert part in text, part
    assert ", ".join(GROUPS) in text


def test_apc_help_lists_conform(capsys: pytest.CaptureFixture[str]) -> None:
    assert apc(["--help"]) == 0
    assert "conform    check any Agent Process server's conformance over MCP" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give --config FILE (a server to check) or --self (our own)"),
        (["--self", "--config", "x.toml"], "give --config FILE (a server to check) or --self (our own)"),
        (["--self", "--server", "http://127.0.0.1:1/mcp"], "--server is for --config, not --self"),
        (["--self", "--only", "nope"], "unknown group or check 'nope'"),
        (["--self", "--only", "people.nope"], "unknown group or check 'people.nope'"),
        (["--self", "--speed", "0"], "must be a positive number"),
        (["--self", "--jobs", "0"], "expected a whole number from 1"),
        (["--config", "x.toml", "--server", "ftp://x"], "expected an http(s) URL"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(argv)[0] == EXIT_USAGE
    assert message in capsys.readouterr().err


def test_only_takes_single_checks_beside_groups() -> None:
    code, out = _run(["--list", "--only", "people.stale", "--only", "time"])
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["people.stale", *[c.name for c in checks(("time",))]]


def test_list_names_every_check_with_its_section_and_coverage() -> None:
    code, out = _run(["--list", "--only", "people"])
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == [c.name for c in checks(("people",))]
    assert (
        "people.stale (spec §3.4 (snapshots), §6 rule 4)  covers decide/stale, decide/precedence:stale>forbidden"
        in lines
    )


def test_print_setup_writes_processes_and_configs_our_server_accepts(tmp_path: Path) -> None:
    code, out = _run(["--print-setup", str(tmp_path), "--speed", "60"])
    assert code == 0
    assert f"apc serve --config {tmp_path / 'org.toml'} --speed 60" in out
    for process in [*shipped().values(), *earlier().values()]:
        assert (tmp_path / "processes" / process.folder / "PROCESS.md").read_text() == process.text
    assert {role for process in shipped().values() for role in process.roles} == {"approver"}
    config = conform_config.load(tmp_path / "conform.toml")
    assert (config.servers, config.speed, config.group) == (("http://127.0.0.1:8765/mcp",), 60.0, "g_conform")
    org = OrgConfig.load(tmp_path / "org.toml")
    assert [p.path.name for p in org.processes][:2] == ["conform-versions", "conform-branch"]
    assert org.check.evaluator == "scripted"
    for name, actor in config.actors.items():
        identity = org.identity_for_token(actor.token)
        assert identity is not None and identity.id == actor.value, name
    assert org.groups["g_conform"] == (config.actor("person1").value, config.actor("person2").value)
    assert org.is_operator(org.identity_for_token(config.actor("operator").token))  # type: ignore[arg-type]
    assert org.groups_of(org.identity_for_token(config.actor("outsider").token)) == []  # type: ignore[arg-type]
    answers = tomllib.loads((tmp_path / "check-answers.toml").read_text())
    assert {a["step"] for a in answers["answer"]} == {"screen", "advise", "review"}


async def test_every_process_of_the_setup_publishes_on_our_engine(tmp_path: Path) -> None:
    _run(["--print-setup", str(tmp_path)])
    engine = await Engine.open(tmp_path / "data", OrgConfig.load(tmp_path / "org.toml"))
    try:
        results = await engine.publish_config_processes()
    finally:
        await engine.close()
    assert [(r.ok, r.issues) for r in results] == [(True, [])] * (len(shipped()) + len(earlier()))
    assert [(r.name, r.version) for r in results if r.name == "conform-versions"] == [
        ("conform-versions", 1),
        ("conform-versions", 2),
    ]


def test_a_config_error_names_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(["--print-setup", str(tmp_path)])
    conform = tmp_path / "conform.toml"
    conform.write_text(conform.read_text().replace("[identities.outsider]", "[identities.stranger]"))
    assert _run(["--config", str(conform)])[0] == EXIT_USAGE
    assert "identities.stranger: unknown key" in capsys.readouterr().err


def test_an_unreachable_server_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(["--print-setup", str(tmp_path)])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, _ = _run(["--config", str(tmp_path / "conform.toml"), "--server", f"http://127.0.0.1:{port}/mcp"])
    assert code == EXIT_SETUP
    assert capsys.readouterr().err == (
        f"apc conform: cannot run: operator cannot connect to http://127.0.0.1:{port}/mcp: "
        f"All connection attempts failed; [Errno 111] Connect call failed ('127.0.0.1', {port})\n"
    )
