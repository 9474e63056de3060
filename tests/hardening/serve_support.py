"""`apc serve` as a real process, for the crash and attack tests: the org config (every kind of
credential) and a process that exercises every kind of timer; tests/support/rpc.py is their client.

The server runs as `python -m engine.cli serve`, its log in a file the tests read afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.ports import free_port

REPO = Path(__file__).resolve().parents[2]

AGENTS = {"a_one": "tok-agent-one-0001", "a_two": "tok-agent-two-0002", "a_three": "tok-agent-three-03"}
REVIEWERS = {"rita@example.com": "tok-person-rita-01", "sam@example.com": "tok-person-sam-002"}
OUTSIDER = ("nobody@example.com", "tok-person-nobody1")
"""A person in the organization who belongs to no group."""
OPERATOR = ("ops@example.com", "tok-operator-ops-1")
HASHED_AGENT = ("a_hashed", "tok-agent-hashed-9")
"""An agent whose config entry holds only the token's SHA-256."""

FLOW = """
---
name: crash-flow
description: Draft, check and review a ticket, then wait for the go-ahead or time out.
inputs:
  ticket: string
steps:
  - id: draft
    agent: Draft the answer.
    output: { note: string }
    due: 2h
  - id: check
    agent: Check the draft.
    output: { note: string }
  - id: review
    person: reviewers
    approve: Approve the answer.
    on_reject: draft
    due: 1h
  - id: hold
    wait_for: go
    timeout: 30m
    on_timeout: closed
  - id: done
    finish: sent
  - id: closed
    finish: timed-out
---

# Crash flow

Agents draft and check, a reviewer approves, an operator sends the go-ahead.
"""


def org_toml(*, lease_seconds: int = 600, oauth: dict[str, str] | None = None) -> str:
    lines = [f"[server]\nlease_seconds = {lease_seconds}\n"]
    lines.append(f"[[groups]]\nid = 'g_reviewers'\nmembers = {json.dumps(sorted(REVIEWERS))}\n")
    for email, token in REVIEWERS.items():
        lines.append(f"[[people]]\nemail = '{email}'\ntoken = '{token}'\n")
    lines.append(f"[[people]]\nemail = '{OUTSIDER[0]}'\ntoken = '{OUTSIDER[1]}'\n")
    lines.append(f"[[people]]\nemail = '{OPERATOR[0]}'\ntoken = '{OPERATOR[1]}'\noperator = true\n")
    for agent, token in AGENTS.items():
        lines.append(f"[[agents]]\nid = '{agent}'\ntoken = '{token}'\n")
    digest = hashlib.sha256(HASHED_AGENT[1].encode()).hexdigest()
    lines.append(f"[[agents]]\nid = '{HASHED_AGENT[0]}'\ntoken_sha256 = '{digest}'\n")
    lines.append("[[processes]]\npath = 'processes/crash-flow'\nbind = { reviewers = 'g_reviewers' }\n")
    if oauth is not None:
        lines.append("[oauth]\n" + "".join(f"{k} = '{v}'\n" for k, v in oauth.items()))
    return "\n".join(lines)


def write_config(root: Path, **options: Any) -> Path:
    folder = root / "processes" / "crash-flow"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PROCESS.md").write_text(textwrap.dedent(FLOW).lstrip("\n"))
    path = root / "org.toml"
    path.write_text(org_toml(**options))
    return path


@dataclass
class Served:
    """One `apc serve` process; its log (stderr) accumulates in `log` across restarts."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path
    offset: int = 0
    """Where this start's lines begin in `log`."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def launch_serve(
    config: Path, data: Path, log: Path, *, speed: float = 1, extra: Sequence[str] = ()
) -> Served:
    """Start `apc serve` (`extra`: more of its options) without waiting for it; see `wait_serving`."""
    port = free_port()
    command = [sys.executable, "-m", "engine.cli", "serve", "--config", str(config), "--data", str(data)]
    command += ["--port", str(port), "--speed", str(speed), *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    offset = log.stat().st_size if log.exists() else 0
    with log.open("ab") as sink:
        process = subprocess.Popen(command, cwd=config.parent, env=env, stderr=sink, stdout=sink)
    return Served(process, port, log, offset)


def start_serve(config: Path, data: Path, log: Path, *, speed: float = 1, timeout: float = 60) -> Served:
    """Start `apc serve` and return once its log says it is serving (or fail with the log)."""
    return wait_serving(launch_serve(config, data, log, speed=speed), timeout)


def wait_serving(served: Served, timeout: float = 60) -> Served:
    """`served` once its log says it is serving (or fail with the log)."""
    process, log, offset = served.process, served.log, served.offset
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        written = log.read_bytes()[offset:].decode(errors="replace")
        if " serving http" in written:
            return served
        if process.poll() is not None:
            raise AssertionError(f"apc serve exited {process.returncode}:\n{written}")
        time.sleep(0.05)
    served.kill()
    raise AssertionError(f"apc serve did not start within {timeout}s:\n{log.read_text()}")
