"""Fixtures for engine tests: `engine` (see engine_support.py), on the `clock` of tests/conftest.py, and
`store` (a bare SQLite store, for the writer's own tests)."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.store.sqlite import SqliteStore
from tests.engine.engine_support import engine

__all__ = ["engine", "store"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "engine.db")
    try:
        yield opened
    finally:
        await opened.close()
