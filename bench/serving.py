"""An `apc serve` process for the benches that measure a real server: its org.toml, a free port,
and the wait until it serves.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

ORG_TOML = """
[server]
run_data_bytes = 1100000

[[groups]]
id = "reviewers"
members = ["{reviewer}"]

[[people]]
email = "{reviewer}"
token = "bench-person-token"

[[processes]]
path = "processes/three-steps"
"""


def agents_toml(agents: int) -> str:
    """The `[[agents]]` tables of `agents` bench agents, a_0 .. a_{agents-1}, with their tokens."""
    return "".join(f"\n[[agents]]\nid = 'a_{n}'\ntoken = 'bench-agent-token-{n}'\n" for n in range(agents))


async def wait_serving(process: subprocess.Popen[str], log: Path) -> None:
    """Until `apc serve`, logging to `log`, says it is serving (a minute at most); its log if it stopped."""
    for _ in range(600):
        if " serving " in log.read_text():
            return
        if process.poll() is not None:
            raise RuntimeError(f"apc serve stopped: {log.read_text()}")
        await asyncio.sleep(0.1)
    raise RuntimeError("apc serve did not start")


def free_port() -> int:
    """A port the system has free on 127.0.0.1 now, for a server about to start."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
