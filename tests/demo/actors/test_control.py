"""DemoControl: the console's handle on the demo agents."""

from __future__ import annotations

import asyncio

import pytest

from demo.actors.control import AgentState, DemoControl


def control_of(*names: str) -> DemoControl:
    control = DemoControl()
    for name in names:
        control.add(AgentState(name))
    return control


def test_pause_and_resume_one_or_all() -> None:
    control = control_of("a", "b")
    control.pause("a")
    assert [(s.name, s.paused, s.status) for s in control.agents] == [
        ("a", True, "paused"),
        ("b", False, "starting"),
    ]
    control.pause()
    assert all(s.paused for s in control.agents)
    control.state("b").hold("screening · check_vendor", "r_1")
    control.resume()
    assert [(s.paused, s.status, s.last_action) for s in control.agents] == [
        (False, "idle", "resumed"),
        (False, "working", "resumed"),
    ]
    assert control.toggle("a") is True
    assert control.state("a").paused is True
    with pytest.raises(KeyError, match="no demo agent named 'zed'"):
        control.pause("zed")


async def test_the_world_pause_holds_every_agent_and_its_own_pause_holds_one() -> None:
    control = control_of("a", "b")
    control.pause_world()
    assert control.world_paused is True
    waiting = [asyncio.create_task(control.wait_running(n)) for n in ("a", "b")]
    world = asyncio.create_task(control.wait_world())
    await asyncio.sleep(0)
    assert [t.done() for t in (*waiting, world)] == [False, False, False]
    control.pause("a")
    control.resume_world()
    await asyncio.wait_for(asyncio.gather(waiting[1], world), 1)
    await asyncio.sleep(0)
    assert waiting[0].done() is False, "the agent paused on its own stays paused"
    assert control.toggle("a") is False
    await asyncio.wait_for(waiting[0], 1)
    with pytest.raises(KeyError, match="no demo agent named 'zed'"):
        control.toggle("zed")


def test_a_row_is_what_the_demo_agents_tab_shows() -> None:
    state = AgentState("agent-ada", identity="agent-ada · token sha256:1a2b3c4d")
    state.hold("customer-refund · verify_order", "r_8ba58b5e91c2")
    state.called("09:14:03 claim verify_order → ok")
    state.submitted, state.escalated = 2, 1
    assert state.row() == {
        "name": "agent-ada",
        "identity": "agent-ada · token sha256:1a2b3c4d",
        "status": "starting",
        "step": "customer-refund · verify_order · r_8ba58b5…",
        "lastCall": "09:14:03 claim verify_order → ok",
        "lastAction": "starting",
        "paused": False,
        "claimed": 0,
        "submitted": 2,
        "escalated": 1,
        "lapsed": 0,
    }


def test_every_change_moves_the_version() -> None:
    control = control_of("a")
    before = control.version
    control.state("a").act("claimed")
    assert control.version == before + 1
    assert list(control.state("a").recent) == ["claimed"]


async def test_a_paused_agent_waits_until_resumed() -> None:
    control = control_of("a")
    control.pause("a")
    waiting = asyncio.create_task(control.wait_running("a"))
    await asyncio.sleep(0)
    assert not waiting.done()
    control.resume("a")
    await asyncio.wait_for(waiting, 1)
