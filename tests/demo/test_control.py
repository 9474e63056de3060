"""DemoControl: the console's handle on the demo agents."""

from __future__ import annotations

import asyncio

import pytest

from console.demo.control import MAX_SPEED, MIN_SPEED, AgentState, DemoControl


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
    control.toggle("a")
    assert control.state("a").paused is True
    with pytest.raises(KeyError, match="no demo agent named 'zed'"):
        control.pause("zed")


def test_speed_doubles_halves_and_stays_in_bounds() -> None:
    control = control_of("a", "b")
    control.faster("a")
    control.slower("b")
    assert [s.speed for s in control.agents] == [2.0, 0.5]
    assert control.state("a").last_action == "speed set to 2x"
    control.set_speed(1000)
    assert [s.speed for s in control.agents] == [MAX_SPEED, MAX_SPEED]
    control.set_speed(0)
    assert [s.speed for s in control.agents] == [MIN_SPEED, MIN_SPEED]


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
