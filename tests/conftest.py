"""Test-wide fixtures: a ManualClock, the PostgreSQL schema fixtures, and the store a `both_stores` test
runs on.

A test module marked `pytestmark = pytest.mark.both_stores` runs each of its tests that use the
`store_kind` fixture (the engine fixture does) once on SQLite and once on PostgreSQL.
"""

from __future__ import annotations

import pytest

from engine.clock import ManualClock
from tests.support.postgres import BOTH_STORES, pg_database, pg_schema_url

__all__ = ["clock", "pg_database", "pg_schema_url", "store_kind"]


@pytest.fixture
def clock() -> ManualClock:
    """Time that moves only when the test moves it."""
    return ManualClock()


@pytest.fixture
def store_kind() -> str:
    return "sqlite"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_kind" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_stores"):
        metafunc.parametrize("store_kind", BOTH_STORES)
