"""Helpers of the runner's tests: `SelfRun` (what one `apc conform --self` left behind) and `served`,
our engine in this process behind its MCP endpoint(s) on the org `apc conform --print-setup` writes,
for tests that break it on purpose or serve it in ways `apc serve` does not."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conform import config as conform_config
from conform.setup import write_setup
from engine.clock import SystemClock
from engine.core import Engine
from engine.evaluator import CheckConfig
from engine.http.app import RunningServer, bind_socket, start_server
from engine.org import OrgConfig

SPEED = 120.0
TICK_SECONDS = 0.1


@dataclass(frozen=True)
class SelfRun:
    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any]
    junit: str
    trace: list[dict[str, Any]]


@contextlib.asynccontextmanager
async def served(
    root: Path, *, endpoints: int = 1, check_profile: bool = True
) -> AsyncIterator[conform_config.ConformConfig]:
    """The engine behind `endpoints` MCP endpoints (one database, so one server scaled out as far as a
    client can tell); without `check_profile` there is no evaluator, so check-1 is not offered and
    conform-check is not published."""
    files = write_setup(root / "setup", SPEED)
    org = OrgConfig.load(files.org)
    if not check_profile:
        kept = [p for p in org.processes if p.path.name != "conform-check"]
        org = dataclasses.replace(org, check=CheckConfig(), processes=kept)
    # The first endpoint's socket is held from before the engine opens (its URL names the port): a
    # port only looked up would be free for anyone to take while the engine opens and publishes.
    sock = bind_socket("127.0.0.1", 0)
    try:
        engine = await Engine.open(
            root / "data",
            org,
            clock=SystemClock(SPEED),
            public_base_url=f"http://127.0.0.1:{sock.getsockname()[1]}",
        )
    except BaseException:
        sock.close()
        raise
    ticking: asyncio.Task[None] | None = None
    servers: list[RunningServer] = []
    try:
        published = await engine.publish_config_processes()
        assert [r.issues for r in published if not r.ok] == []
        servers.append(await start_server(engine, sock=sock))
        for _ in range(endpoints - 1):
            servers.append(await start_server(engine))

        async def tick() -> None:
            while True:
                await engine.tick()
                await asyncio.sleep(TICK_SECONDS)

        ticking = asyncio.create_task(tick())
        urls = tuple(server.url for server in servers)
        yield dataclasses.replace(conform_config.load(files.conform), servers=urls)
    finally:
        if ticking is not None:
            ticking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticking
        if not servers:
            sock.close()  # never served
        for server in servers:
            await server.stop()
        await engine.close()
