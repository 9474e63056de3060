"""`apc demo` with the console: the operator's console on the demo engine, with the demo agents tab."""

from __future__ import annotations

import asyncio
import re

from console.app import ApcApp
from demo.actors.people import PeopleBehaviour
from demo.fronts.pane import DemoPane
from demo.fronts.terminal import begin, begin_when_up, build_app
from demo.stories.story import load_story
from demo.system import DemoSettings, DemoSystem
from demo.world.org import OPERATOR
from tests.demo.demo_support import until


def shown_agents(app: ApcApp) -> list[str]:
    """The agents the Demo agents tab lists, none before the tab is built and has read the status."""
    panes = app.main.query(DemoPane)
    return list(panes.first().table.keys) if panes else []


async def test_the_console_opens_as_the_operator_with_the_demo_agents_tab() -> None:
    settings = DemoSettings(speed=3000, runs=3, port_start=29865, people=PeopleBehaviour(play_operator=False))
    system = await DemoSystem.open(settings)
    try:
        system.start()
        app = build_app(system)
        async with app.run_test(size=(160, 40)):
            await asyncio.wait_for(app.ready.wait(), 10)
            assert (app.client.identity.id, app.client.identity.operator) == (OPERATOR, True)
            app.main.show_tab("demo")
            await until(lambda: bool(shown_agents(app)))  # the tab's first read of the demo's status
            assert shown_agents(app) == list(system.org.agents)
            pane = app.main.query_one(DemoPane)
            assert app.session is not None and app.session.endpoint is not None
            assert app.session.endpoint.url == system.server.url
            assert app.session.notices == [
                "Demo: 10 sample processes, 3 agents over MCP, demo clock 3000x. "
                "You are the operator: escalations come to you.",
                "Model checks are answered by scripted:check-answers.toml: a refusal goes back to the "
                "agent, an unsure verdict comes to you with the held submission.",
            ]
            assert system.refused == {}
            assert re.fullmatch(
                r"\d+ runs started · \d+ decisions by demo people · \d+ events sent · "
                r"checks: \d+ refused, \d+ fixed, \d+ held for you",
                system.status_line(),
            )
            await pane.refresh_rows()
            identities = [(pane.table.row_cells(name) or ())[1].plain for name in system.org.agents]
            assert all(
                i.startswith(f"{n} · token sha256:")
                for i, n in zip(identities, system.org.agents, strict=True)
            )
    finally:
        await system.close()


async def test_a_story_plays_beside_the_console_and_cues_the_presenters_acts() -> None:
    story = load_story("operator-triage")
    settings = DemoSettings(
        speed=3000, runs=0, port=0, seed=story.seed, people=PeopleBehaviour(play_operator=False)
    )
    system = await DemoSystem.open(settings)
    try:
        system.start()
        system.play(story)
        app = build_app(system)
        async with app.run_test(size=(200, 44)):
            await asyncio.wait_for(app.ready.wait(), 10)
            assert app.session is not None and app.session.notices[-1].startswith(
                "Story operator-triage: Refund triage in five minutes. You are the operator"
            )
            player = system.story
            assert player is not None
            cue = "return the escalation of verify_order on "
            await until(lambda: any(c.startswith(cue) for c in player.cues))
            app.main.show_tab("demo")
            await until(lambda: bool(shown_agents(app)))
            pane = app.main.query_one(DemoPane)
            await pane.refresh_rows()
            await until(lambda: any(t.startswith(f"Your turn: {cue}") for t in app.toasts))
            assert f"your turn: {cue}" in str(app.main.query_one("#demo-story").render())
            run_id = next(p.run_id for p in player.progress if p.moment.name == "lost-order")
            assert run_id is not None
            read = await system.engine.call(system.operator, "get_run", {"runId": run_id})
            [item] = read["data"]["workItems"]
            arguments = {
                **item["decide"]["arguments"],
                "decision": "returned",
                "note": "Search by order number.",
            }
            returned = await system.engine.call(system.operator, "decide", {**arguments, "requestId": "op-1"})
            assert returned["ok"], returned
            await until(lambda: next(p for p in player.progress if p.moment.name == "return-lost-order").done)
            assert not any(c.startswith(cue) for c in player.cues), "done by the presenter: no longer cued"
    finally:
        await system.close()


async def test_the_demo_starts_once_the_consoles_first_screen_is_written() -> None:
    settings = DemoSettings(speed=3000, runs=3, port=0, people=PeopleBehaviour(play_operator=False))
    system = await DemoSystem.open(settings)
    try:
        app = build_app(system)
        seen: list[tuple[bool, int]] = []

        async def start() -> None:
            seen.append((app.ready.is_set(), len(system.starter.started)))
            await begin(system)

        starting = asyncio.create_task(begin_when_up(app, start))
        async with app.run_test(size=(160, 40)):
            await asyncio.wait_for(starting, 10)
            assert seen == [(True, 0)]
            await until(lambda: len(system.starter.started) == 3)
    finally:
        await system.close()
