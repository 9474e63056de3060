"""Ending a run (spec §3.5): finish, cancel, and `run_ended` before anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.core import Engine
from tests.engine.engine_support import (
    MIRA,
    OPS,
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


async def _finish_step(engine: Engine, run_id: str, step_id: str) -> dict:
    token = (await claim(engine, run_id, step_id))["token"]
    return ok(
        await call(engine, SCREENER, "submit", token=token, output={"note": step_id}, summary="done"),
        "submit",
    )


async def test_a_finish_step_ends_the_run_with_its_outcome(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    for step_id in ("one", "two"):
        await _finish_step(engine, run_id, step_id)
    view = await _finish_step(engine, run_id, "three")
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "finished")
    assert view["run"]["ended"] == {"by": "server", "at": "2026-10-06T09:00:00Z", "note": None}
    assert step_states(view) == {"one": "done", "two": "done", "three": "done", "done": "done"}
    assert sorted(view["data"]["steps"]) == ["one", "three", "two"]


async def test_cancel_ends_the_run_cancels_steps_and_stops_tokens(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    err(await call(engine, MIRA, "cancel", runId=run_id, reason="no"), "forbidden")
    err(await call(engine, SCREENER, "cancel", runId=run_id, reason="no"), "forbidden")
    err(await call(engine, OPS, "cancel", runId="r_missing", reason="no"), "not_found")
    err(await call(engine, OPS, "cancel", runId=run_id, reason=" "), "invalid", ["reason: required"])
    view = ok(
        await call(engine, OPS, "cancel", runId=run_id, reason="Duplicate request.", requestId="req-c"),
        "cancel",
    )
    assert (view["run"]["state"], view["run"]["outcome"]) == ("cancelled", None)
    assert view["run"]["ended"] == {
        "by": "ops@example.com",
        "at": "2026-10-06T09:00:00Z",
        "note": "Duplicate request.",
    }
    assert step_states(view) == {"one": "cancelled", "two": None, "three": None, "done": None}
    assert view["workItems"] == []
    ended = ["run_ended"]
    err(
        await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"),
        "conflict",
        ended,
    )
    err(await call(engine, SCREENER, "renew", token=token), "conflict", ended)
    err(await call(engine, MIRA, "claim", runId=run_id, stepId="one"), "conflict", ended)
    err(await call(engine, OPS, "cancel", runId=run_id, reason="again"), "conflict", ended)
    err(await call(engine, MIRA, "send_event", runId=run_id, name="x"), "conflict", ended)
    replay = await call(engine, OPS, "cancel", runId=run_id, reason="Duplicate request.", requestId="req-c")
    assert ok(replay, "cancel") == view
    assert ok(await call(engine, SCREENER, "get_work"), "get_work")["items"] == []


async def test_an_escalated_run_cancelled_removes_its_work_item(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    ok(await call(engine, SCREENER, "escalate", token=token, note="stuck"), "escalate")
    view = ok(await call(engine, OPS, "cancel", runId=run_id, reason="r"), "cancel")
    assert view["workItems"] == []
    assert step_states(view)["one"] == "cancelled"
    assert ok(await call(engine, OPS, "get_work"), "get_work")["items"] == []
