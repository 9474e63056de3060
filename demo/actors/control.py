"""What the console sees of the demo agents and how it steers one: pause and resume.

Each agent owns an `AgentState` and reports into it: who its token says it is, the step it works on,
its last call to the server and what came back. The console only reads states and calls
`DemoControl`. A paused agent stops before its next call (a claim it holds keeps its lease until the
lease ends, exactly as with a real agent that stalls), and resumes where it stopped.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import TypedDict

RECENT_ACTIONS = 30


class AgentRow(TypedDict):
    """One agent as the Demo agents tab shows it and `apc_demo_control` reports it."""

    name: str
    identity: str
    status: str
    step: str
    lastCall: str
    lastAction: str
    paused: bool
    claimed: int
    submitted: int
    escalated: int
    lapsed: int


@dataclass
class AgentState:
    name: str
    identity: str = ""
    """Who the agent's bearer token makes it on the server, and which token: `agent-ada · token …1a2b`."""
    status: str = "starting"
    """starting, idle, working, paused, error or stopped."""
    holding: str | None = None
    """What the agent holds a claim on: `process · step`, or None."""
    run_id: str | None = None
    last_action: str = "starting"
    last_call: str = "—"
    """The last tool call and its answer: `09:14:03 submit verify_order → ok`."""
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

    def called(self, text: str) -> None:
        self.last_call = text
        self.version += 1

    @property
    def step(self) -> str:
        """The step it works on now, with its run: `customer-refund · verify_order · r_8ba58b5…`."""
        if self.holding is None:
            return "—"
        return f"{self.holding} · {self.run_id[:9]}…" if self.run_id else self.holding

    def row(self) -> AgentRow:
        """What the Demo agents tab shows of the agent, as plain data (also over `apc_demo_control`)."""
        return {
            "name": self.name,
            "identity": self.identity,
            "status": self.status,
            "step": self.step,
            "lastCall": self.last_call,
            "lastAction": self.last_action,
            "paused": self.paused,
            "claimed": self.claimed,
            "submitted": self.submitted,
            "escalated": self.escalated,
            "lapsed": self.lapsed,
        }


class DemoControl:
    """Pause and resume: one agent, or the whole demo world (every agent, the people, the event feed,
    the timers, the stream of runs and a story), which waits at its next call until resumed."""

    def __init__(self) -> None:
        self._states: dict[str, AgentState] = {}
        self._running: dict[str, asyncio.Event] = {}
        self._world = asyncio.Event()
        self._world.set()
        self.world_version = 0

    @property
    def world_paused(self) -> bool:
        return not self._world.is_set()

    def pause_world(self) -> None:
        self._world.clear()
        self.world_version += 1

    def resume_world(self) -> None:
        self._world.set()
        self.world_version += 1

    async def wait_world(self) -> None:
        """Return at once while the world runs; while it is paused, once it is resumed."""
        await self._world.wait()

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
        return sum(s.version for s in self._states.values()) + self.world_version

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

    def toggle(self, name: str) -> bool:
        """Pause the agent, or resume it; True when it is now paused."""
        if name not in self._states:
            raise KeyError(f"no demo agent named {name!r}")
        if self._states[name].paused:
            self.resume(name)
        else:
            self.pause(name)
        return self._states[name].paused

    async def wait_running(self, name: str) -> None:
        """Until both the agent and the world run."""
        while not (self._running[name].is_set() and self._world.is_set()):
            await self._running[name].wait()
            await self._world.wait()

    def _targets(self, name: str | None) -> list[AgentState]:
        if name is None:
            return list(self._states.values())
        if name not in self._states:
            raise KeyError(f"no demo agent named {name!r}")
        return [self._states[name]]
