"""Presenter controls: one place that pauses and resumes the demo world, speeds its clock up or down,
leaves a work item or a run to the presenter, and stages a moment; and the status the console shows.

The same controls reach the terminal console (in-process) and every browser tab of `apc demo --web`
(a console in another process), which calls them through the one extra tool the demo's server
offers its operators, `apc_demo_control`. Either way the answer is the status below, plain JSON.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypedDict

from demo.actors.control import AgentRow, DemoControl
from demo.actors.director import Director
from demo.stories.stage import MOMENTS, moment
from engine.http.extra import ExtraTool
from engine.identity import Identity

TOOL = "apc_demo_control"
ACTIONS = ("status", "pause", "resume", "faster", "slower", "leave", "stage", "agent")
MIN_SPEED = 1.0
MAX_SPEED = 7680.0


class StoryStatus(TypedDict):
    """The story being played: its moments done, the log's last lines, the cues waiting on the presenter."""

    name: str
    title: str
    user: str
    done: int
    moments: int
    log: list[str]
    cues: list[str]


class MomentName(TypedDict):
    name: str
    title: str


class DemoStatus(TypedDict):
    """What `apc_demo_control` answers (`STATUS_SCHEMA`): the demo world as the console shows it."""

    paused: bool
    speed: float
    now: str
    agents: list[AgentRow]
    left: list[str]
    moments: list[MomentName]
    story: StoryStatus | None
    line: str
    message: str


class PresenterError(Exception):
    """An action that cannot be done, said in one line (an unknown moment, a run it cannot stage)."""


class World(Protocol):
    """What the controls act on: a DemoSystem (kept abstract so a test can stand in)."""

    control: DemoControl
    director: Director

    @property
    def speed(self) -> float: ...

    def set_speed(self, speed: float) -> None: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    async def stage_moment(self, name: str) -> str: ...

    def now_text(self) -> str: ...

    def status_line(self) -> str: ...

    def story_status(self) -> StoryStatus | None: ...


class DemoPresenter:
    """The controls of one demo. Its tool is served before the demo is wired up, so the world it
    acts on is given once there is one (`attach`)."""

    def __init__(self, world: World | None = None) -> None:
        self._world = world

    def attach(self, world: World) -> None:
        self._world = world

    @property
    def world(self) -> World:
        if self._world is None:
            raise PresenterError("the demo is still starting")
        return self._world

    def status(self, message: str = "") -> DemoStatus:
        world = self.world
        return {
            "paused": world.control.world_paused,
            "speed": world.speed,
            "now": world.now_text(),
            "agents": [state.row() for state in world.control.agents],
            "left": world.director.left,
            "moments": [{"name": m.name, "title": m.title} for m in MOMENTS],
            "story": world.story_status(),
            "line": world.status_line(),
            "message": message,
        }

    async def control(self, action: str, arguments: Mapping[str, object]) -> DemoStatus:
        """Do `action` and answer the status after it; PresenterError when it cannot be done."""
        world = self.world
        if action == "status":
            return self.status()
        if action == "pause":
            world.pause()
            return self.status("Demo paused: agents, people, events and the clock stand still.")
        if action == "resume":
            world.resume()
            return self.status("Demo resumed.")
        if action in ("faster", "slower"):
            speed = world.speed * 2 if action == "faster" else world.speed / 2
            world.set_speed(min(max(speed, MIN_SPEED), MAX_SPEED))
            return self.status(f"Demo clock {world.speed:g}x real time.")
        if action == "leave":
            return self.status(self._leave(arguments))
        if action == "stage":
            name = _text(arguments, "moment")
            try:
                moment(name)
            except KeyError as exc:
                raise PresenterError(str(exc.args[0])) from None
            return self.status(await world.stage_moment(name))
        if action == "agent":
            name = _text(arguments, "name")
            try:
                paused = world.control.toggle(name)
            except KeyError as exc:
                raise PresenterError(str(exc.args[0])) from None
            return self.status(f"{name} {'paused' if paused else 'resumed'}.")
        raise PresenterError(f"unknown action {action!r} (known: {', '.join(ACTIONS)})")

    def _leave(self, arguments: Mapping[str, object]) -> str:
        run_id = _text(arguments, "runId")
        step_id = arguments.get("stepId")
        if step_id is not None and not isinstance(step_id, str):
            raise PresenterError("stepId: expected text")
        on = self.world.director.leave(run_id, step_id)
        what = f"{step_id} of {run_id}" if step_id else f"run {run_id}"
        if on:
            return f"Left to you: {what}. Demo people will not decide it."
        return f"{what[0].upper()}{what[1:]} is back with the demo people."

    def tool(self) -> ExtraTool:
        """`apc_demo_control`, for the demo's server: operators only, not part of `describe`."""

        async def handle(identity: Identity, arguments: dict[str, Any]) -> dict[str, Any]:
            action = arguments.get("action")
            if not isinstance(action, str):
                return _invalid(f"action: required, one of {', '.join(ACTIONS)}")
            unknown = sorted(set(arguments) - {"action", "runId", "stepId", "moment", "name"})
            if unknown:
                return _invalid(f"{unknown[0]}: not an argument of {TOOL}")
            try:
                return {"ok": True, "data": await self.control(action, arguments)}
            except PresenterError as exc:
                return _invalid(str(exc))

        return ExtraTool(
            name=TOOL,
            title="Control the live demo",
            description=(
                "Presenter controls of apc demo (operators only): status; pause or resume the demo world "
                "(agents, people, events and the clock); faster or slower (the clock's speed); leave a run, "
                "or one step of it, to the presenter (toggle); stage a moment on a fresh run; pause or "
                "resume one agent."
            ),
            input_schema=INPUT_SCHEMA,
            data_schema=STATUS_SCHEMA,
            handler=handle,
        )


def _text(arguments: Mapping[str, object], key: str) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or not value:
        raise PresenterError(f"{key}: required")
    return value


def _invalid(issue: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": "invalid", "message": issue, "issues": [issue]}}


INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
        "runId": {
            "type": "string",
            "description": "leave: the run to leave to the presenter, or to take back.",
        },
        "stepId": {"type": "string", "description": "leave: only this step of the run (its work items)."},
        "moment": {
            "type": "string",
            "enum": [m.name for m in MOMENTS],
            "description": "stage: the moment to start on a fresh run.",
        },
        "name": {"type": "string", "description": "agent: the demo agent to pause or resume."},
    },
    "required": ["action"],
    "additionalProperties": False,
}

STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "paused": {"type": "boolean"},
        "speed": {"type": "number"},
        "now": {"type": "string", "description": "The demo clock, RFC 3339."},
        "agents": {"type": "array", "items": {"type": "object"}},
        "left": {"type": "array", "items": {"type": "string"}},
        "moments": {"type": "array", "items": {"type": "object"}},
        "story": {"type": ["object", "null"]},
        "line": {"type": "string"},
        "message": {"type": "string"},
    },
    "required": ["paused", "speed", "now", "agents", "left", "moments", "story", "line", "message"],
}


class Controls(Protocol):
    async def control(self, action: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        """The status after `action` (a `DemoStatus`); PresenterError when it cannot be done."""
        ...


class RemoteControls:
    """The controls of a demo in another process, through its server's `apc_demo_control`."""

    def __init__(self, call: Callable[[str, dict[str, object]], Awaitable[Any]]) -> None:
        self._call = call

    async def control(self, action: str, arguments: dict[str, Any]) -> DemoStatus:
        envelope = await self._call(TOOL, {"action": action, **arguments})
        if envelope.get("ok"):
            data: DemoStatus = envelope["data"]
            return data
        error = envelope.get("error") or {}
        raise PresenterError(str(error.get("message") or error.get("code") or "the demo did not answer"))


class ConsolePresenter:
    """The console's handle on the controls (console.presenter.Presenter): the last status read, for
    the header and the Demo agents tab, and each action's answer in words."""

    def __init__(self, controls: Controls, speed: float) -> None:
        self.controls = controls
        self.last: Mapping[str, Any] | None = None
        """A `DemoStatus`, as the controls answered it."""
        self.read_at = 0.0
        """The real time (`time.time()`) the last status was read."""
        self._speed = speed

    @property
    def paused(self) -> bool:
        return bool(self.last and self.last["paused"])

    @property
    def speed(self) -> float:
        return float(self.last["speed"]) if self.last else self._speed

    @property
    def moments(self) -> list[tuple[str, str]]:
        return [(m.name, m.title) for m in MOMENTS]

    async def status(self) -> Mapping[str, Any] | None:
        """Read the status again; None when the demo could not be asked (it stays as last read)."""
        try:
            self._read(await self.controls.control("status", {}))
        except PresenterError:
            return None
        return self.last

    def _read(self, status: Mapping[str, Any]) -> None:
        self.last, self.read_at = status, time.time()

    async def control(self, action: str, arguments: dict[str, str]) -> tuple[bool, str]:
        try:
            status = await self.controls.control(action, dict(arguments))
        except PresenterError as exc:
            return False, str(exc)
        self._read(status)
        return True, str(status["message"])
