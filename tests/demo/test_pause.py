"""Pausing the live demo stops every demo actor and the server clock: with the injected clock advanced
(its monotonic source, hours of it), no actor makes a call and no run changes state while paused, while
the operator's own actions still work; resumed, time goes on from where it stood, never back; the
presenter's speed keys change the clock's speed without a jump."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from demo.system import DemoSettings, DemoSystem
from engine.identity import Identity


class Monotonic:
    """The real-time source the demo's ServerClock counts by, moved only by the test."""

    def __init__(self) -> None:
        self.value = 1000.0

    def __call__(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds


class Counted:
    """Every tool call the engine answers, by whom, counted (whatever path it came by: MCP or in-process)."""

    def __init__(self, system: DemoSystem) -> None:
        self.calls: list[tuple[str, str]] = []
        engine = system.engine
        real = engine.call

        async def call(identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            self.calls.append((identity.id, tool))
            return await real(identity, tool, arguments)

        engine.call = call  # type: ignore[method-assign]


async def snapshot(system: DemoSystem, real: Any) -> list[tuple[str, str, str]]:
    """Every run's id, state and last change, read past the counter (the test's own look)."""
    found = []
    for state in ("active", "waiting", "ended", "cancelled"):
        page = await real(system.operator, "list_runs", {"state": state, "limit": 100})
        found += [(r["id"], r["state"], r["updatedAt"]) for r in page["data"]["items"]]
    return sorted(found)


async def running(system: DemoSystem, mono: Monotonic, rounds: int) -> None:
    """Let the demo run: real time passes a little, the injected clock a second a round."""
    for _ in range(rounds):
        mono.advance(1.0)
        await asyncio.sleep(0.02)


async def test_pause_stops_every_actor_and_the_clock_and_resume_goes_on(tmp_path: Path) -> None:
    mono = Monotonic()
    settings = DemoSettings(
        data_dir=tmp_path / "demo", speed=600, agents=2, port=0, runs=6, initial_runs=4, lease_seconds=600
    )
    system = await DemoSystem.open(settings, monotonic=mono)
    real_call = system.engine.call
    counted = Counted(system)
    try:
        system.start()
        await running(system, mono, 60)
        assert len(system.starter.started) >= 4
        assert {who for who, _ in counted.calls} >= {"agent-ada", "agent-bo"}, "agents work over MCP"

        paused = await system.presenter.control("pause", {})
        assert (paused["paused"], paused["message"]) == (
            True,
            "Demo paused: agents, people, events and the clock stand still.",
        )
        while any(agent.in_call for agent in system.agents):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        before = (len(counted.calls), system.clock.now(), await snapshot(system, real_call))

        for _ in range(40):  # ten hours of the injected source, 6,000 hours at 600x
            mono.advance(900)
            await asyncio.sleep(0.03)
        await system.engine.tick()
        after = (len(counted.calls), system.clock.now(), await snapshot(system, real_call))
        assert after == before, "no call, the clock stood still, no run changed"
        assert system.presenter.status()["paused"] is True

        [(run_id, _, _), *_] = [r for r in before[2] if r[1] in ("active", "waiting")]
        cancelled = await real_call(
            system.operator, "cancel", {"runId": run_id, "reason": "Shown while paused.", "requestId": "op-1"}
        )
        assert cancelled["ok"] and cancelled["data"]["run"]["state"] == "cancelled", "the operator still acts"

        stood = system.clock.now()
        resumed = await system.presenter.control("resume", {})
        assert (resumed["paused"], resumed["message"]) == (False, "Demo resumed.")
        assert system.clock.now() == stood, "resumed from where it stood, not from the injected source"
        mono.advance(2.0)
        assert system.clock.now() == stood + timedelta(seconds=1200)
        calls = len(counted.calls)
        await running(system, mono, 30)
        assert len(counted.calls) > calls, "the actors go on"

        faster = await system.presenter.control("faster", {})
        assert (faster["speed"], faster["message"]) == (1200.0, "Demo clock 1200x real time.")
        at = system.clock.now()
        mono.advance(1.0)
        assert system.clock.now() == at + timedelta(seconds=1200), "the new speed from now on, no jump"
        slower = await system.presenter.control("slower", {})
        assert slower["speed"] == 600.0
        for _ in range(20):
            await system.presenter.control("slower", {})
        assert system.speed == 1.0, "never slower than real time"
    finally:
        await system.close()
