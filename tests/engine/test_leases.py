"""Spec §6 rule 2 through `engine.call`: leases, renew, stale and unverifiable tokens, handoff."""

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
    claim,
    err,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores


async def _run(engine: Engine, tmp_path: Path) -> str:
    await publish(engine, tmp_path, THREE_AGENTS)
    return (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]


async def test_renew_replaces_the_token_at_once_and_keeps_progress(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id = await _run(engine, tmp_path)
    old = (await claim(engine, run_id, "one"))["token"]
    clock.advance(300)
    renewed = ok(await call(engine, SCREENER, "renew", token=old, progress="Half the lists done."), "renew")
    assert renewed["expiresAt"] == "2026-10-06T09:15:00Z"
    assert renewed["token"] != old
    err(await call(engine, SCREENER, "renew", token=old), "stale")
    err(await call(engine, SCREENER, "submit", token=old, output={"note": "n"}, summary="s"), "stale")
    clock.advance(400)
    view = ok(
        await call(engine, SCREENER, "submit", token=renewed["token"], output={"note": "n"}, summary="s"),
        "submit",
    )
    assert step_states(view)["one"] == "done"
    assert view["data"]["steps"]["one"]["at"] == "2026-10-06T09:11:40Z"


async def test_an_ended_lease_makes_the_step_claimable_with_the_progress_handed_off(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    ok(await call(engine, SCREENER, "renew", token=token, progress="Found the vendor file."), "renew")
    assert ok(await call(engine, OTHER_AGENT, "get_work"), "get_work")["items"] == []
    clock.advance(seconds=600)
    [item] = ok(await call(engine, OTHER_AGENT, "get_work"), "get_work")["items"]
    assert (item["readySince"], item["handoff"]) == (
        "2026-10-06T09:10:00Z",
        {"progress": "Found the vendor file."},
    )
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view)["one"] == "ready"
    data = await claim(engine, run_id, "one", who=OTHER_AGENT)
    assert data["handoff"] == {"progress": "Found the vendor file."}
    assert data["expiresAt"] == "2026-10-06T09:20:00Z"


async def test_tokens_after_the_lease_are_stale_and_unknown_tokens_invalid(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    clock.advance(600)
    err(await call(engine, SCREENER, "renew", token=token), "stale")
    err(await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "stale")
    err(await call(engine, SCREENER, "escalate", token=token, note="n"), "stale")
    err(
        await call(engine, SCREENER, "submit", token="forged", output={}, summary="s"),
        "invalid",
        ["token: not valid"],
    )
    err(await call(engine, SCREENER, "renew", token=token + "x"), "invalid", ["token: not valid"])


async def test_another_agent_cannot_use_a_token_it_was_not_given(engine: Engine, tmp_path: Path) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    err(
        await call(engine, OTHER_AGENT, "submit", token=token, output={"note": "n"}, summary="s"), "forbidden"
    )


async def test_handoff_is_null_on_a_first_attempt(engine: Engine, tmp_path: Path) -> None:
    run_id = await _run(engine, tmp_path)
    [item] = ok(await call(engine, SCREENER, "get_work"), "get_work")["items"]
    assert item["handoff"] is None
    assert (await claim(engine, run_id, "one"))["handoff"] is None
