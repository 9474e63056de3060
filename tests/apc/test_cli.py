"""`apc`: the console's options and their mistakes, the token from APC_TOKEN, a data folder in use,
the other commands handed on, help and version, and no Textual at import."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from apc.cli import main
from conform.cli import main as conform_main
from demo.cli import main as demo_main
from engine.datafolder import FolderLock
from tests.support.processes import write_process

REPO = Path(__file__).resolve().parents[2]


def test_importing_the_command_line_imports_no_textual() -> None:
    probe = "import sys, apc.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
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


def test_demo_and_conform_get_the_rest_of_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, direct, first in (
        (["demo", "--list-stories"], demo_main, "approver "),
        (["conform", "--list", "--only", "describe"], conform_main, "describe.protocol "),
    ):
        assert main(argv) == 0
        through_apc = capsys.readouterr()
        assert direct(argv[1:]) == 0
        assert capsys.readouterr() == through_apc and through_apc.err == ""
        assert through_apc.out.startswith(first), through_apc.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--server", "http://x/mcp"], "apc: error: --server needs --token (or $APC_TOKEN)\n"),
        (["--token", "t"], "apc: error: --token is for --server\n"),
        (
            ["--server", "http://x/mcp", "--token", "t", "--data", "d"],
            "apc: error: --data is for the embedded engine, not --server\n",
        ),
        (
            ["--server", "http://x/mcp", "--token", "t", "--port", "0"],
            "apc: error: --port is for the embedded engine, not --server\n",
        ),
    ],
)
def test_option_mistakes_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("APC_TOKEN", raising=False)
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


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"apc {version('agentprocess-console')}\n"


def test_the_remote_token_can_come_from_apc_token(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []

    def run_console(args: argparse.Namespace) -> int:
        seen.append((args.server, args.token))
        return 0

    monkeypatch.setattr("console.launch.run_console", run_console)
    monkeypatch.setenv("APC_TOKEN", "token-from-env")
    assert main(["--server", "http://x/mcp"]) == 0
    assert main(["--server", "http://x/mcp", "--token", "token-on-the-line"]) == 0
    assert seen == [("http://x/mcp", "token-from-env"), ("http://x/mcp", "token-on-the-line")]


def test_a_data_folder_in_use_stops_the_console_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    lock = FolderLock.acquire(data)
    try:
        assert main(["--data", str(data)]) == 1
    finally:
        lock.release()
    assert capsys.readouterr().err == (
        f"apc: error: the data folder {data} is in use by process {os.getpid()}: "
        "stop it, or choose another folder with --data\n"
    )
