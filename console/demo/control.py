"""What the console sees of the demo agents and how it steers them: pause, resume, speed.

Each agent owns an `AgentState` and reports into it; the console only reads states and calls
`DemoControl`. A paused agent stops before its next action (a claim it holds keeps its lease until
the lease ends, exactly as with a real agent that stalls), and resumes where it stopped.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

MIN_SPEED = 0.125
MAX_SPEED = 16.0
RECENT_ACTIONS = 30


@dataclass
class AgentState:
    name: str
    status: str = "starting"
    """starting, idle, working, paused, error or stopped."""
    holding: str | None = None
    """What the agent holds a claim on: `process · step`, or None."""
    run_id: str | None = None
    last_action: str = "starting"
    speed: float = 1.0
    """Work-time factor: 2.0 works twice as fast."""
    paused: bool = False
    claimed: int = 0
    submitted: int = 0
    escalated: int = 0
    lapsed: int = 0
    refused: int = 0
    check_refused: int = 0
    """Submissions a model check refused (each is also counted in `refused`)."""
    check_fixed: int = 0
    """Submissions accepted after the check refused an earlier one of the same attempt."""
    held: int = 0
    """Submissions an unsure check held for a person."""
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT_ACTIONS))
    version: int = 0
    """Bumped on every change, so a view can tell whether to redraw."""

    def act(self, action: str, *, status: str | None = None) -> None:
        self.last_action = action
        self.recent.append(action)
        if status is not None:
            self.status = status
        self.version += 1

    def hold(self, what: str | None, run_id: str | None = None) -> None:
        self.holding, self.run_id = what, run_id
        self.version += 1


class DemoControl:
    def __init__(self) -> None:
        self._states: dict[str, AgentState] = {}
        self._running: dict[str, asyncio.Event] = {}

    def add(self, state: AgentState) -> None:
        self._states[state.name] = state
        running = asyncio.Event()
        running.set()
        self._running[state.name] = running

    @property
    def agents(self) -> list[AgentState]:
        return list(self._states.values())

    def state(self, name: str) -> AgentState:
        return self._states[name]

    @property
    def version(self) -> int:
        return sum(s.version for s in self._states.values())

    def pause(self, name: str | None = None) -> None:
        for state in self._targets(name):
            state.paused = True
            self._running[state.name].clear()
            state.act("paused by the operator", status="paused")

    def resume(self, name: str | None = None) -> None:
        for state in self._targets(name):
            if state.paused:
                state.paused = False
                self._running[state.name].set()
                state.act("resumed", status="working" if state.holding else "idle")

    def toggle(self, name: str) -> None:
        if self._states[name].paused:
            self.resume(name)
        else:
            self.pause(name)

    def set_speed(self, speed: float, name: str | None = None) -> None:
        value = min(max(speed, MIN_SPEED), MAX_SPEED)
        for state in self._targets(name):
            state.speed = value
            state.act(f"speed set to {value:g}x")

    def faster(self, name: str | None = None) -> None:
        for state in self._targets(name):
            self.set_speed(state.speed * 2, state.name)

    def slower(self, name: str | None = None) -> None:
        for state in self._targets(name):
            self.set_speed(state.speed / 2, state.name)

    async def wait_running(self, name: str) -> None:
        await self._running[name].wait()

    def _targets(self, name: str | None) -> list[AgentState]:
        if name is None:
            return list(self._states.values())
        if name not in self._states:
            raise KeyError(f"no demo agent named {name!r}")
        return [self._states[name]]
