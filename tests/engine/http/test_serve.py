"""`apc serve` and `apc token new`: configuration checked first, publishing, serving, clean shutdown."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.core import YOUNG_OBJECTS
from engine.datafolder import FolderLock, default_data_dir
from engine.http.app import RunningServer
from engine.http.serve import ServeOptions, serve
from engine.org import OrgConfig
from tests.engine.http.http_support import AGENT, AGENT_TOKEN, MIRA, MIRA_TOKEN, SCREENING, ok
from tests.support.mcp import McpCaller
from tests.support.ports import free_port
from tests.support.processes import write_process

REPO = Path(__file__).resolve().parents[3]

ORG = f"""
[[groups]]
id = "g_finance"
members = ["{MIRA}"]

[[people]]
email = "{MIRA}"
token_sha256 = "{hashlib.sha256(MIRA_TOKEN.encode()).hexdigest()}"

[[agents]]
id = "{AGENT}"
token = "{AGENT_TOKEN}"

[[processes]]
path = "processes/screening"
bind = {{ finance-approver = "g_finance" }}
"""


def write_config(tmp_path: Path, text: str = ORG) -> Path:
    write_process(tmp_path / "processes", SCREENING)
    path = tmp_path / "org.toml"
    path.write_text(text)
    return path


async def serve_once(options: ServeOptions) -> tuple[int, list[dict[str, object]]]:
    """Serve until the first list_processes answer is in, then stop; the exit status and the items."""
    stop = asyncio.Event()
    ready: asyncio.Queue[RunningServer] = asyncio.Queue()
    task = asyncio.create_task(serve(options, stop=stop, on_ready=ready.put_nowait))
    server = await ready.get()
    async with McpCaller(server.url, AGENT_TOKEN) as client:
        items = ok(await client.call("list_processes"), "list_processes")["items"]
    stop.set()
    return await task, items


async def test_serve_publishes_then_serves_until_stopped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    options = ServeOptions(config=write_config(tmp_path), data=tmp_path / "data", port=free_port())
    kept = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        with caplog.at_level(logging.INFO, logger="apc.serve"):
            first = await serve_once(options)
            second = await serve_once(options)
        assert gc.get_threshold() == (YOUNG_OBJECTS, 10, 10), "a serving process collects less often"
    finally:
        gc.set_threshold(*kept)
    assert [(status, [(i["name"], i["version"]) for i in items]) for status, items in (first, second)] == [
        (0, [("screening", 1)]),
        (0, [("screening", 1)]),
    ]
    messages = [r.getMessage() for r in caplog.records if r.name == "apc.serve"]
    assert messages[0] == "published screening version 1"
    assert messages[1].startswith(f"serving http://127.0.0.1:{options.port}/mcp (data: {tmp_path / 'data'}")
    assert messages[2:4] == ["stopped", "screening version 1 is current"]
    # The second start names the server time it resumed at, no earlier than the first one's.
    assert messages[4].split(", server time ")[0] == messages[1].split(", server time ")[0]
    assert messages[4].split(", server time ")[1] >= messages[1].split(", server time ")[1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            ORG + "\n[server]\nlease = 60\n",
            "server.lease: unknown key (allowed: database, database_pool_size, database_timeout_seconds, files, "
            "lease_seconds, max_upload_bytes, run_data_bytes, secrets_file)",
        ),
        (ORG.replace(f'email = "{MIRA}"', 'email = "mira"'), "people[0].email: not an email address"),
        (ORG + "\n[oauth]\nissuer = 7\n", "line 19: oauth.issuer: expected a non-empty string"),
        (
            ORG + "\n[[agents]\n",
            "not valid TOML (Expected ']]' at the end of an array declaration (at line 18, column 9))",
        ),
    ],
    ids=["unknown key", "bad value", "oauth", "syntax"],
)
async def test_a_bad_config_exits_2_naming_the_key_before_anything_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, message: str
) -> None:
    config = write_config(tmp_path, text)
    options = ServeOptions(config=config, data=tmp_path / "data", port=free_port())
    with caplog.at_level(logging.ERROR, logger="apc.serve"):
        status = await serve(options, stop=asyncio.Event())
    assert status == 2
    assert [r.getMessage() for r in caplog.records] == [f"configuration error: {config}: {message}"]
    assert not (tmp_path / "data").exists()


async def test_a_process_that_cannot_be_published_exits_2_with_its_issues(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path, ORG.replace('bind = { finance-approver = "g_finance" }', "bind = {}"))
    options = ServeOptions(config=config, data=tmp_path / "data", port=free_port())
    with caplog.at_level(logging.ERROR, logger="apc.serve"):
        status = await serve(options, stop=asyncio.Event())
    assert status == 2
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot publish {tmp_path / 'processes' / 'screening'}:",
        "  bind.finance-approver: required, the group that works role 'finance-approver'",
    ]


async def test_a_taken_port_exits_1(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    blocker = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)
    try:
        options = ServeOptions(config=write_config(tmp_path), data=tmp_path / "data", port=port)
        with caplog.at_level(logging.ERROR, logger="apc.serve"):
            status = await serve(options, stop=asyncio.Event())
    finally:
        blocker.close()
        await blocker.wait_closed()
    assert status == 1
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_server_process_stops_cleanly_on_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    port = free_port()
    command = [sys.executable, "-m", "engine.cli", "serve", "--config", str(write_config(tmp_path))]
    command += ["--data", str(tmp_path / "data"), "--port", str(port), "--speed", "60"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        lines = []
        for line in process.stderr:
            lines.append(line)
            if " serving " in line:
                break
        asyncio.run(_describe(f"http://127.0.0.1:{port}/mcp"))
        process.send_signal(sig)
        # A hang guard, not a timing assertion (the machine may be loaded): a clean stop ends at once.
        status = process.wait(timeout=15)
        rest = process.stderr.read()
    assert status == 0, [*lines, rest]
    assert f"agent:{AGENT} describe ok" in rest
    assert rest.rstrip().endswith("INFO stopped")
    assert "Traceback" not in rest


async def _describe(url: str) -> None:
    async with McpCaller(url, AGENT_TOKEN) as client:
        ok(await client.call("describe"), "describe")


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--speed", "0"], "argument --speed: must be a positive number"),
        (["--speed", "fast"], "argument --speed: not a number: 'fast'"),
        (["--port", "70000"], "argument --port: not a port number: '70000'"),
        (
            ["--public-url", "agents.example.com"],
            "argument --public-url: expected an http(s) base URL, got 'agents.example.com'",
        ),
    ],
)
def test_bad_options_are_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], problem: str
) -> None:
    assert main(["serve", "--config", "org.toml", *argv]) == 2
    assert capsys.readouterr().err.rstrip().endswith(f"apc serve: error: {problem}")


def test_the_data_folder_defaults_to_the_platform_user_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / "apc"


def test_token_new_prints_a_token_and_the_line_that_admits_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "new"]) == 0
    first_line, config_line = capsys.readouterr().out.splitlines()
    token = first_line.removeprefix("token: ")
    assert token.startswith("apc_") and len(token) == 47
    assert config_line == f'token_sha256 = "{hashlib.sha256(token.encode()).hexdigest()}"'
    org = OrgConfig.from_mapping(
        {"agents": [{"id": "a_new", config_line.split(" = ")[0]: config_line.split('"')[1]}]}, base=Path()
    )
    assert org.identity_for_token(token) is not None
    assert org.identity_for_token(token + "x") is None


def test_two_tokens_differ(capsys: pytest.CaptureFixture[str]) -> None:
    main(["token", "new"])
    main(["token", "new"])
    lines = capsys.readouterr().out.splitlines()
    assert len({lines[0], lines[2]}) == 2


async def test_a_data_folder_that_cannot_be_made_exits_1(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    options = ServeOptions(config=write_config(tmp_path), data=blocker / "data", port=free_port())
    with caplog.at_level(logging.ERROR, logger="apc.serve"):
        status = await serve(options, stop=asyncio.Event())
    assert status == 1
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot open the data folder {blocker / 'data'}: [Errno 20] Not a directory: '{blocker / 'data'}'"
    ]


async def test_port_0_serves_on_a_free_port_and_says_which(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    options = ServeOptions(config=write_config(tmp_path), data=tmp_path / "data", port=0)
    stop = asyncio.Event()
    ready: asyncio.Queue[RunningServer] = asyncio.Queue()
    with caplog.at_level(logging.INFO, logger="apc.serve"):
        task = asyncio.create_task(serve(options, stop=stop, on_ready=ready.put_nowait))
        server = await ready.get()
        try:
            assert server.port != 0
            assert server.url == f"http://127.0.0.1:{server.port}/mcp"
            async with McpCaller(server.url, AGENT_TOKEN) as client:
                assert ok(await client.call("describe"), "describe")["protocol"] == "agentprocess"
        finally:
            stop.set()
        assert await task == 0
    assert any(r.getMessage().startswith(f"serving {server.url} ") for r in caplog.records)


async def test_a_data_folder_in_use_exits_1_naming_its_holder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    lock = FolderLock.acquire(data)
    try:
        options = ServeOptions(config=write_config(tmp_path), data=data, port=0)
        with caplog.at_level(logging.ERROR, logger="apc.serve"):
            status = await serve(options, stop=asyncio.Event())
    finally:
        lock.release()
    assert status == 1
    assert [r.getMessage() for r in caplog.records] == [
        f"the data folder {data} is in use by process {os.getpid()}: stop it, or choose another folder with --data"
    ]
