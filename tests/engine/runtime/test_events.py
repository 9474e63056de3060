"""Events (spec §3.6): delivered to a ready wait, or held and consumed oldest first when one is ready."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.core import Engine
from tests.engine.engine_support import (
    MIRA,
    OPS,
    OTHER_AGENT,
    SCREENER,
    call,
    claim,
    err,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores

TWO_WAITS = """
---
name: two-waits
description: Work, then wait twice for the same signal.
steps:
  - id: work
    agent: Do the work.
  - id: first
    wait_for: signal
  - id: second
    wait_for: signal
  - id: done
    finish: done
---
"""


async def test_events_held_before_the_wait_are_consumed_oldest_first(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, TWO_WAITS)
    run_id = (await start(engine, "two-waits", {}))["run"]["id"]
    for n, who in ((1, SCREENER), (2, OPS)):
        reply = await call(engine, who, "send_event", runId=run_id, name="signal", data={"n": n})
        assert ok(reply, "send_event") == {"consumedBy": None}
    assert ok(await call(engine, SCREENER, "send_event", runId=run_id, name="other"), "send_event") == {
        "consumedBy": None
    }
    token = (await claim(engine, run_id, "work"))["token"]
    view = ok(await call(engine, SCREENER, "submit", token=token, output={}, summary="done"), "submit")
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "done")
    steps = view["data"]["steps"]
    assert steps["first"] == {
        "output": {"n": 1},
        "by": "a_screener",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    assert steps["second"] == {
        "output": {"n": 2},
        "by": "ops@example.com",
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    err(await call(engine, SCREENER, "send_event", runId=run_id, name="other"), "conflict", ["run_ended"])


async def test_an_event_for_a_ready_wait_is_consumed_at_once(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, TWO_WAITS)
    run_id = (await start(engine, "two-waits", {}))["run"]["id"]
    token = (await claim(engine, run_id, "work"))["token"]
    view = ok(await call(engine, SCREENER, "submit", token=token, output={}, summary="done"), "submit")
    assert step_states(view)["first"] == "waiting"
    reply = await call(engine, OTHER_AGENT, "send_event", runId=run_id, name="signal")
    assert ok(reply, "send_event") == {"consumedBy": "first"}
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["data"]["steps"]["first"]["output"] == {}
    assert step_states(view)["second"] == "waiting"


async def test_send_event_checks_who_and_what(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, TWO_WAITS)
    run_id = (await start(engine, "two-waits", {}))["run"]["id"]
    err(await call(engine, MIRA, "send_event", runId=run_id, name="signal"), "forbidden")
    reply = await call(engine, SCREENER, "send_event", runId=run_id, name="Bad Name")
    err(reply, "invalid", ["name: must match ^[a-z][a-z0-9_-]{0,63}$"])
    err(await call(engine, SCREENER, "send_event", runId="r_nope", name="signal"), "not_found")
    err(
        await call(engine, SCREENER, "send_event", runId=run_id, name="signal", data=[1]),
        "invalid",
        ["data: expected object"],
    )
    big = {"blob": "x" * (1024 * 1024)}
    reply = await call(engine, SCREENER, "send_event", runId=run_id, name="signal", data=big)
    assert err(reply, "not_accepted")["issues"][0].startswith("data: ")
