"""The demo event feed sends the events `wait_for` steps wait on: in time, late, or with no timeout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from demo.actors.events import EventBehaviour, EventSource
from demo.world.pace import ManualPace
from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity, agent, person
from tests.demo.demo_support import AGENT_B, MIRA, rid
from tests.support.processes import publish


def feed(engine: Engine, clock: ManualClock, **behaviour: Any) -> EventSource:
    return EventSource(
        engine, agent(AGENT_B), ManualPace(clock), behaviour=EventBehaviour(**behaviour), seed=2
    )


async def start(engine: Engine) -> str:
    started = await engine.call(
        person(MIRA), "start_run", {"process": "delivery", "inputs": {"item": "Laptop"}, "requestId": rid()}
    )
    assert started["ok"], started
    return started["data"]["run"]["id"]


async def states(engine: Engine, run_id: str) -> tuple[dict[str, str], dict[str, Any]]:
    data = (await engine.call(person(MIRA), "get_run", {"runId": run_id}))["data"]
    return {s["id"]: s["state"] for s in data["steps"] if s["state"]}, data


async def test_an_in_time_event_completes_the_wait_and_an_untimed_one_follows(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = await start(engine)
    source = feed(engine, clock, in_time=(0.5, 0.5), late_share=0, untimed_minutes=(8, 8))
    assert await source.poll() == 0
    clock.advance(minutes=14)
    assert await source.poll() == 0
    clock.advance(minutes=1)
    assert await source.poll() == 1
    seen, data = await states(engine, run_id)
    assert seen == {"await_delivery": "done", "await_signature": "waiting"}
    assert data["data"]["steps"]["await_delivery"]["output"] == {
        "receivedAt": "2026-10-06T09:15:00Z",
        "source": "demo event feed",
    }
    assert data["data"]["steps"]["await_delivery"]["by"] == AGENT_B
    assert await source.poll() == 0
    clock.advance(minutes=8)
    assert await source.poll() == 1
    seen, data = await states(engine, run_id)
    assert (data["run"]["outcome"], dict(source.sent)) == ("received", {"in_time": 2, "consumed": 2})


async def test_a_late_event_arrives_after_the_timeout_took_the_other_path(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = await start(engine)
    source = feed(engine, clock, late_share=1)
    assert await source.poll() == 0
    clock.advance(minutes=30)
    await engine.tick()
    seen, _ = await states(engine, run_id)
    assert seen == {"await_delivery": "done", "chase": "ready"}
    assert await source.poll() == 0, "a late event comes 1.1 to 1.4 times the timeout after the wait began"
    clock.advance(minutes=12)
    assert await source.poll() == 1
    assert dict(source.sent) == {"late": 1}
    seen, _ = await states(engine, run_id)
    assert seen == {"await_delivery": "done", "chase": "ready"}


class Recorded:
    """The engine as the feed calls it, with every call kept: (tool, arguments without the requestId)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((tool, {k: v for k, v in arguments.items() if k != "requestId"}))
        return await self.engine.call(identity, tool, arguments)


async def test_the_feed_reads_only_runs_of_processes_with_a_wait_for_step(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = await start(engine)
    for n in range(3):
        started = await engine.call(
            person(MIRA),
            "start_run",
            {"process": "review", "inputs": {"requestTitle": f"R{n}"}, "requestId": rid()},
        )
        assert started["ok"], started
    recorded = Recorded(engine)
    source = EventSource(engine, agent(AGENT_B), ManualPace(clock), seed=2, caller=recorded)
    assert await source.poll() == 0
    assert recorded.calls == [
        ("list_processes", {}),
        ("list_runs", {"process": "delivery", "state": "waiting", "limit": 100}),
        ("get_run", {"runId": run_id}),
        ("list_runs", {"process": "delivery", "state": "active", "limit": 100}),
    ]
    assert list(source._planned) == [(run_id, "await_delivery")]


DELIVERY_WITHOUT_WAITS = """
---
name: delivery
description: The courier is no longer waited on; an agent confirms the delivery.
inputs:
  item: string
steps:
  - id: confirm
    agent: Confirm the delivery with the courier.
    output:
      status: string
    next: received
  - id: received
    finish: received
---

# Delivery

An agent confirms.
"""


async def test_a_run_of_an_older_version_with_a_wait_for_step_is_still_fed(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    run_id = await start(engine)
    await publish(engine, tmp_path / "v2", DELIVERY_WITHOUT_WAITS)
    source = feed(engine, clock, in_time=(0.5, 0.5), late_share=0)
    assert await source.poll() == 0
    assert list(source._planned) == [(run_id, "await_delivery")]
    clock.advance(minutes=15)
    assert await source.poll() == 1
