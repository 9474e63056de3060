"""`server`: a fresh engine on a temporary folder with a ManualClock and the audit's organization (on
PostgreSQL too in a `both_stores` module)."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conformance.conformance_support import Server, open_server


@pytest.fixture
async def server(tmp_path: Path, store_kind: str, request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    database = request.getfixturevalue("pg_database") if store_kind == "postgresql" else None
    async with open_server(tmp_path, database=database) as opened:
        yield opened
