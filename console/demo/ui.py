"""`apc demo` with the console: the operator's view of the live demo, with a tab for the demo agents.

The console runs embedded on the demo engine as the operator (in every group, receiving escalations),
the endpoint tab shows the demo's MCP endpoint with a spare agent token for an agent of one's own, and
everything else keeps running in the same event loop while the console is open.
"""

from __future__ import annotations

from console.app import ApcApp
from console.client.local import LocalClient
from console.demo.org import GUEST_AGENT
from console.demo.pane import DemoPane
from console.demo.system import DemoSettings, DemoSystem
from console.session import EndpointInfo, ExtraPane, Session


def status_line(system: DemoSystem) -> str:
    started = len(system.starter.started)
    decisions = sum(system.people.decisions.values())
    events = system.events.sent["in_time"] + system.events.sent["late"]
    agents = system.control.agents
    refused = sum(a.check_refused for a in agents)
    fixed = sum(a.check_fixed for a in agents)
    held = sum(a.held for a in agents)
    return (
        f"demo clock {system.settings.speed:g}x · {started} runs started · "
        f"{decisions} decisions by demo people · {events} events sent · "
        f"checks: {refused} refused, {fixed} fixed, {held} held for you · "
        "space pause/resume agent, a all, +/- speed"
    )


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
    return shown


def build_app(system: DemoSystem) -> ApcApp:
    session = Session(
        client=LocalClient(system.engine, system.operator),
        where=f"demo · {system.data_dir}",
        clock=system.clock,
        endpoint=EndpointInfo(
            system.server.url, GUEST_AGENT, system.org.tokens[GUEST_AGENT], system.data_dir
        ),
        notices=notices(system),
    )
    pane = ExtraPane(
        "demo", "Demo agents", lambda: DemoPane(system.control, status=lambda: status_line(system))
    )
    return ApcApp(session, extra_panes=[pane])


async def run_ui(settings: DemoSettings) -> int:
    system = await DemoSystem.open(settings)
    try:
        system.start()
        await build_app(system).run_async()
    finally:
        await system.close()
    return 0
