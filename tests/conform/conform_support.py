"""Our engine in this process behind its MCP endpoint(s), on the org `apc conform --print-setup` writes,
for tests that break it on purpose or serve it in ways `apc serve` does not."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

from conform import config as conform_config
from conform.setup import write_setup
from engine.auth import OrgConfig
from engine.check import CheckConfig
from engine.clock import SystemClock
from engine.core import Engine
from engine.http.app import RunningServer, first_free_port, start_server

SPEED = 120.0
LEASE_SECONDS = 240
"""Two real seconds: checks that wait for a lease to end stay short."""
TICK_SECONDS = 0.1


@contextlib.asynccontextmanager
async def served(
    root: Path, *, endpoints: int = 1, check_profile: bool = True
) -> AsyncIterator[conform_config.ConformConfig]:
    """The engine behind `endpoints` MCP endpoints (one database, so one server scaled out as far as a
    client can tell); without `check_profile` there is no evaluator, so check-1 is not offered and
    conform-check is not published."""
    files = write_setup(root / "setup", SPEED)
    org = OrgConfig.load(files.org)
    org = dataclasses.replace(org, server=dataclasses.replace(org.server, lease_seconds=LEASE_SECONDS))
    if not check_profile:
        kept = [p for p in org.processes if p.path.name != "conform-check"]
        org = dataclasses.replace(org, check=CheckConfig(), processes=kept)
    port = first_free_port("127.0.0.1", start=29765)
    engine = await Engine.open(
        root / "data", org, clock=SystemClock(SPEED), public_base_url=f"http://127.0.0.1:{port}"
    )
    ticking: asyncio.Task[None] | None = None
    servers: list[RunningServer] = []
    try:
        published = await engine.publish_config_processes()
        assert [r.issues for r in published if not r.ok] == []
        servers.append(await start_server(engine, port=port))
        for _ in range(endpoints - 1):
            servers.append(await start_server(engine, port=first_free_port("127.0.0.1", start=port + 1)))

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
        for server in servers:
            await server.stop()
        await engine.close()
