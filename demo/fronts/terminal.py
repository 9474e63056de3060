"""`apc demo` with the console: the operator's view of the live demo, with a tab for the demo agents.

The console runs embedded on the demo engine as the operator (in every group, receiving escalations),
the endpoint tab shows the demo's MCP endpoint with a spare agent token for an agent of one's own.
The demo (engine, endpoint, agents, people, events, story) runs on an event loop of its own thread
(`EngineThread`), so the console's loop draws and takes keys while the demo works; every call of the
console and every presenter control is handed over to that loop. The demo starts once the console's
first screen is written: its start-up (agents connecting, the first burst of runs) shares the
interpreter with the console, and the operator would wait for it before seeing anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from console.app import ApcApp
from console.client.engine_thread import EngineThread
from console.client.local import Hop, LocalClient, here
from console.live.session import EndpointInfo, ExtraPane, Session
from demo.fronts.pane import DemoPane
from demo.stories.presenter import ConsolePresenter, Controls
from demo.stories.story import Story
from demo.system import DemoSettings, DemoSystem
from demo.world.org import GUEST_AGENT


def notices(system: DemoSystem, story: Story | None) -> list[str]:
    shown = [
        f"Demo: {len(system.processes)} sample processes, {len(system.agents)} agents over MCP, "
        f"demo clock {system.settings.speed:g}x. You are the operator: escalations come to you."
    ]
    if system.engine.evaluator is not None:
        shown.append(
            f"Model checks are answered by {system.engine.evaluator.model}: a refusal goes back to the "
            "agent, an unsure verdict comes to you with the held submission."
        )
    shown += [
        f"Not published: {name}: {'; '.join(issues)}" for name, issues in sorted(system.refused.items())
    ]
    shown += [f"Demo relations: {problem}" for problem in system.relation_problems]
    if story is not None:
        shown.append(
            f"Story {story.name}: {story.title}. You are the {story.user}: each act is cued here and in the "
            "Demo agents tab when it is due."
        )
    return shown


class HoppedControls:
    """The presenter controls of a demo on another loop: each action runs there."""

    def __init__(self, controls: Controls, hop: Hop[Any]) -> None:
        self._controls = controls
        self._hop = hop

    async def control(self, action: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        status: Mapping[str, Any] = await self._hop(self._controls.control(action, arguments))
        return status


def build_app(system: DemoSystem, hop: Hop[Any] = here, story: Story | None = None) -> ApcApp:
    """The console on `system`; `hop` hands a call over to the loop the demo runs on; `story`: the
    story it plays or is about to play (else the one playing, if any)."""
    if story is None and system.story is not None:
        story = system.story.story
    presenter = ConsolePresenter(HoppedControls(system.presenter, hop), system.speed)
    session = Session(
        client=LocalClient(system.engine, system.operator, hop=hop),
        where=f"demo · {system.data_dir}",
        clock=system.clock,
        endpoint=EndpointInfo(
            system.server.url, GUEST_AGENT, system.org.tokens[GUEST_AGENT], system.data_dir
        ),
        notices=notices(system, story),
        presenter=presenter,
    )
    pane = ExtraPane("demo", "Demo agents", lambda: DemoPane(presenter))
    return ApcApp(session, extra_panes=[pane])


async def run_ui(settings: DemoSettings, story: Story | None = None) -> int:
    """The console on a live demo; with `story`, the story plays beside it, its acts cued for you."""
    if story is not None:
        settings = replace(settings, seed=story.seed, agents=max(settings.agents, story.agents))
        if not story.background:
            settings = replace(settings, runs=0)
    thread = EngineThread("apc-demo")
    try:
        system = await thread.run(DemoSystem.open(settings))
        try:
            app = build_app(system, thread.run, story)
            starting = asyncio.create_task(begin_when_up(app, lambda: thread.run(begin(system, story))))
            try:
                await app.run_async()
            finally:
                starting.cancel()
        finally:
            await thread.run(system.close())
    finally:
        await thread.stop()
    return 0


async def begin_when_up(app: ApcApp, start: Callable[[], Awaitable[None]]) -> None:
    """`start` the demo once the console's first screen is written."""
    await app.ready.wait()
    await start()


async def begin(system: DemoSystem, story: Story | None = None) -> None:
    """On the demo's loop: start every part of the demo, and the story when one is played."""
    system.start()
    if story is not None:
        system.play(story)
