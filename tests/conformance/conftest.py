"""`server`: a fresh engine on a temporary folder with a ManualClock and the audit's organization."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conformance.conformance_support import Server, open_server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with open_server(tmp_path) as opened:
        yield opened
