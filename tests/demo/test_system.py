"""The demo's stream of runs paces itself on the demo's own open runs, not on the org's others."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.seed import publish_approval, seed_approvals
from demo.world.org import ROLES
from tests.demo.demo_support import conducted


async def test_the_stream_starts_its_runs_while_many_runs_of_another_process_are_open(tmp_path: Path) -> None:
    async with conducted(tmp_path, runs=8, initial_runs=2, max_open_runs=40) as system:
        await publish_approval(system.engine, tmp_path / "bulk", ROLES[-1])
        await seed_approvals(system.engine, system.clock, 250)  # more than the demo's 40, and 2 pages
        await asyncio.wait_for(system._stream(), 30)
        assert len(system.starter.started) == 8
        assert await system.open_runs() == 8
        assert await system.open_runs(enough=5) == 5
