"""Fixtures on the `clock` of tests/conftest.py: an engine with the console test processes, the operator's
client, an agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from console.client.local import LocalClient
from engine.clock import ManualClock
from engine.core import Engine
from tests.console.console_support import Agent, make_client, open_engine


@pytest.fixture
async def engine(tmp_path: Path, clock: ManualClock) -> AsyncIterator[Engine]:
    eng = await open_engine(tmp_path, clock)
    try:
        yield eng
    finally:
        await eng.close()


@pytest.fixture
def client(engine: Engine) -> LocalClient:
    return make_client(engine)


@pytest.fixture
def agent(engine: Engine) -> Agent:
    return Agent(engine)
