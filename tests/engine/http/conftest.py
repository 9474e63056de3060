"""Fixtures: an engine on a temporary folder with a ManualClock, and its endpoint on a free port."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.http.app import RunningServer, start_server
from tests.engine.http.http_support import BIND, SCREENING, make_org
from tests.support.ports import free_port
from tests.support.processes import publish


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
async def engine(tmp_path: Path, clock: ManualClock, port: int) -> AsyncIterator[Engine]:
    """The engine the server fronts, with `screening` published; file URLs name the server's port."""
    eng = await Engine.open(
        tmp_path / "data", make_org(), clock=clock, public_base_url=f"http://127.0.0.1:{port}"
    )
    try:
        await publish(eng, tmp_path, SCREENING, BIND)
        yield eng
    finally:
        await eng.close()


@pytest.fixture
async def server(engine: Engine, port: int) -> AsyncIterator[RunningServer]:
    running = await start_server(engine, port=port)
    try:
        yield running
    finally:
        await running.stop()
