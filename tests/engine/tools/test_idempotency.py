"""Every write is idempotent on requestId (spec §4), across a restart too."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import (
    MIRA,
    OTHER_AGENT,
    SCREENER,
    THREE_AGENTS,
    call,
    err,
    make_org,
    ok,
    publish,
    start,
)

pytestmark = pytest.mark.both_stores


async def test_a_replayed_claim_returns_the_original_token_even_after_the_lease(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    first = ok(
        await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="req-claim"), "claim"
    )
    clock.advance(900)
    again = ok(
        await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="req-claim"), "claim"
    )
    assert again == first
    reply = await call(engine, SCREENER, "claim", runId=run_id, stepId="two", requestId="req-claim")
    err(reply, "conflict", ["requestId: already used"])
    err(
        await call(engine, OTHER_AGENT, "claim", runId=run_id, stepId="one", requestId="req-claim"),
        "conflict",
    )


async def test_same_request_changes_nothing_and_failed_calls_are_not_recorded(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    bad = await call(engine, SCREENER, "start_run", process="three-agents", inputs={}, requestId="req-start")
    err(bad, "invalid", ["inputs.ticket: missing"])
    view = await start(engine, "three-agents", {"ticket": "A"}, requestId="req-start")
    again = ok(
        await call(
            engine,
            SCREENER,
            "start_run",
            process="three-agents",
            inputs={"ticket": "A"},
            requestId="req-start",
        ),
        "start_run",
    )
    assert again == view
    assert len(ok(await call(engine, MIRA, "list_runs"), "list_runs")["items"]) == 1


async def test_replays_survive_a_restart(tmp_path: Path, clock: ManualClock) -> None:
    engine = await Engine.open(tmp_path / "data", make_org(), clock=clock)
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    first = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="req-1"), "claim")
    await engine.close()
    reopened = await Engine.open(tmp_path / "data", make_org(), clock=clock)
    try:
        again = ok(
            await call(reopened, SCREENER, "claim", runId=run_id, stepId="one", requestId="req-1"), "claim"
        )
        assert again == first
        view = ok(
            await call(reopened, SCREENER, "submit", token=first["token"], output={"note": "n"}, summary="s"),
            "submit",
        )
        assert view["data"]["steps"]["one"]["output"] == {"note": "n"}
    finally:
        await reopened.close()
