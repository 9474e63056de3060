"""`apc demo` with the console: the operator's view of the live demo, with a tab for the demo agents.

The console runs embedded on the demo engine as the operator (in every group, receiving escalations),
the endpoint tab shows the demo's MCP endpoint with a spare agent token for an agent of one's own, and
everything else keeps running in the same event loop while the console is open.
"""

from __future__ import annotations

from dataclasses import replace

from console.app import ApcApp
from console.client.local import LocalClient
from console.demo.org import GUEST_AGENT
from console.demo.pane import DemoPane
from console.demo.presenter import ConsolePresenter
from console.demo.stories import Story
from console.demo.system import DemoSettings, DemoSystem
from console.session import EndpointInfo, ExtraPane, Session


def notices(system: DemoSystem) -> list[str]:
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
    if system.story is not None:
        story = system.story.story
        shown.append(
            f"Story {story.name}: {story.title}. You are the {story.user}: each act is cued here and in the "
            "Demo agents tab when it is due."
        )
    return shown


def build_app(system: DemoSystem) -> ApcApp:
    presenter = ConsolePresenter(system.presenter, system.speed)
    session = Session(
        client=LocalClient(system.engine, system.operator),
        where=f"demo · {system.data_dir}",
        clock=system.clock,
        endpoint=EndpointInfo(
            system.server.url, GUEST_AGENT, system.org.tokens[GUEST_AGENT], system.data_dir
        ),
        notices=notices(system),
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
    system = await DemoSystem.open(settings)
    try:
        system.start()
        if story is not None:
            system.play(story)
        await build_app(system).run_async()
    finally:
        await system.close()
    return 0
