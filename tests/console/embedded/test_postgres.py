"""An embedded console whose org config names a PostgreSQL database hears at once of what other
servers on that database change (LISTEN/NOTIFY), and reads again then rather than at its next tick."""

from __future__ import annotations

import asyncio
from pathlib import Path

from console.embedded.launch import ensure_org, open_embedded
from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import SCREENER, THREE_AGENTS, call, make_org, ok, publish


async def test_the_embedded_session_is_woken_by_another_servers_commit(
    tmp_path: Path, pg_database: str
) -> None:
    data = tmp_path / "data"
    ensure_org(data)
    org_file = data / "org.toml"
    org_file.write_text(f"[server]\ndatabase = '{pg_database}'\n\n" + org_file.read_text())
    session = await open_embedded(data, port=0)
    woken = asyncio.Event()
    assert session.watch is not None and session.close is not None
    watching = asyncio.ensure_future(session.watch(woken.set))
    other = await Engine.open(tmp_path / "other", make_org(), clock=ManualClock(), database=pg_database)
    try:
        await asyncio.wait_for(woken.wait(), 10)  # listening: the first call says "anything may have changed"
        woken.clear()
        await publish(other, tmp_path, THREE_AGENTS)
        ok(
            await call(other, SCREENER, "start_run", process="three-agents", inputs={"ticket": "A"}),
            "start_run",
        )
        await asyncio.wait_for(woken.wait(), 10)
    finally:
        await other.close()
        await session.close()
        await asyncio.wait_for(watching, 10)
