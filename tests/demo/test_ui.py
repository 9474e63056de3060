"""`apc demo` with the console: the operator's console on the demo engine, with the demo agents tab."""

from __future__ import annotations

import asyncio
import re

from console.demo.org import OPERATOR
from console.demo.pane import DemoPane
from console.demo.people import PeopleBehaviour
from console.demo.system import DemoSettings, DemoSystem
from console.demo.ui import build_app


async def test_the_console_opens_as_the_operator_with_the_demo_agents_tab() -> None:
    settings = DemoSettings(speed=3000, runs=3, port_start=29865, people=PeopleBehaviour(play_operator=False))
    system = await DemoSystem.open(settings)
    try:
        system.start()
        app = build_app(system)
        async with app.run_test(size=(160, 40)) as pilot:
            await asyncio.wait_for(app.ready.wait(), 10)
            assert (app.client.identity.id, app.client.identity.operator) == (OPERATOR, True)
            app.main.show_tab("demo")
            await pilot.pause()
            pane = app.main.query_one(DemoPane)
            assert pane.table.keys == list(system.org.agents)
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
