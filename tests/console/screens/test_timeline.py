"""Run detail's Timeline tab: from the server's run log when it offers one, from get_run alone when
not (a client double without the tool); the claim holder and lease in the steps table; tabs switch
with `[`/`]` and `h`/`l`; the map and the timeline scroll with `j`/`k`; attempt diffs word by word."""

from __future__ import annotations

from typing import Any

from textual.widgets import TabbedContent

from console.client.local import LocalClient
from console.screens.run import RunScreen
from console.views.diff import diff_values, word_diff
from console.widgets.live_table import LiveTable
from engine.clock import ManualClock
from engine.core import Engine
from tests.console.console_support import OPS, Agent, make_app, press, settle, shown

NOTE = (
    "The EU list portal is down since 08:00; the OFAC search worked. Retry after noon or decide without it."
)


class NoLogClient(LocalClient):
    """A client of a server that offers only the fourteen tools: no `apc_run_log`."""

    async def extra_tools(self) -> frozenset[str]:
        return frozenset()


async def opened(pilot: Any, run_id: str) -> RunScreen:
    app = pilot.app
    await app.ready.wait()
    app.open_run(run_id)
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, RunScreen) and screen.view is not None
    return screen


def active(screen: RunScreen) -> str:
    return str(screen.query_one("#run-tabs", TabbedContent).active)


async def test_the_timeline_tells_the_run_log_in_full(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.escalate(run_id, NOTE)
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot, run_id)
        await press(pilot, "right_square_bracket")
        assert active(screen) == "run-timeline"
        text = shown(app, "#timeline-text")
    assert text.splitlines() == [
        "The server's run log: 4 entries, oldest first.",
        "2026-10-06 09:00  a_screener  started the run (live)",
        "    vendorName: Acme",
        "2026-10-06 09:00  server  check_vendor ready",
        "2026-10-06 09:00  a_screener  claimed check_vendor · lease until 2026-10-06 09:10",
        "2026-10-06 09:00  a_screener  escalated check_vendor",
        f"    {NOTE}",
    ]


async def test_without_the_log_tool_the_timeline_comes_from_get_run(
    engine: Engine, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.escalate(run_id, NOTE)
    client = NoLogClient(engine, OPS)
    assert await client.run_log(run_id) is None
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot, run_id)
        screen.query_one("#run-tabs", TabbedContent).active = "run-timeline"
        await settle(pilot)
        text = shown(app, "#timeline-text")
    assert text.splitlines() == [
        "Pieced together from the run as get_run shows it (this server offers no run log).",
        "2026-10-06 09:00  a_screener  started the run",
        "2026-10-06 09:00  a_screener  escalated check_vendor",
        f"    {NOTE}",
    ]


async def test_the_steps_table_shows_who_holds_a_claim_until_when(
    engine: Engine, client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.call("claim", runId=run_id, stepId="check_vendor")
    for who, expected in (
        (client, "a_screener · until 09:10"),
        (NoLogClient(engine, OPS), "not shown by this server"),
    ):
        app = make_app(who, clock)
        async with app.run_test(size=(160, 40)) as pilot:
            screen = await opened(pilot, run_id)
            table = screen.query_one("#steps-table", LiveTable)
            row = table.get_row("check_vendor")
        assert str(row[-1]) == expected


async def test_tabs_switch_with_brackets_and_h_l_and_the_map_scrolls_with_j_k(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    app = make_app(client, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot, run_id)
        seen = [active(screen)]
        for key in ("right_square_bracket", "l", "l", "left_square_bracket", "h", "h", "left_square_bracket"):
            await press(pilot, key)
            seen.append(active(screen))
        assert seen == [
            "run-steps",
            "run-timeline",
            "run-evidence",
            "run-map",
            "run-evidence",
            "run-timeline",
            "run-steps",
            "run-inputs",
        ]
        await press(pilot, "question_mark")
        help_text = shown(app, "#help-text")
        assert "  ], l          Next tab: The tab to the right" in help_text
        assert "  [, h          Previous tab: The tab to the left" in help_text
        await press(pilot, "escape")
        await press(pilot, "h", "h")
        assert active(screen) == "run-map"
        view = screen.query_one("#run-map-view")
        assert app.focused is view
        view.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        assert view.scroll_y == 0
        await press(pilot, "j", "j")
        assert view.scroll_y == 2
        await press(pilot, "k")
        assert view.scroll_y == 1


def test_long_strings_differ_word_by_word_so_the_change_shows() -> None:
    before = "Searched OFAC and the EU consolidated list by legal name and by trading name; no hits on either list."
    after = "Searched OFAC and the EU consolidated list by legal name and by trading name; one hit on the EU list."
    assert diff_values({"summary": before}, {"summary": after}) == [
        "~ summary: … and by trading name; [-no hits-] {+one hit+} on [-either-] {+the EU+} list."
    ]
    assert diff_values({"n": "short"}, {"n": "shorter"}) == ["~ n: short → shorter"]
    assert word_diff("one two three", "one two three four") == "one two three {+four+}"
    assert word_diff("a b c d e f g h i j", "z b c d e f g h i j") == "[-a-] {+z+} b c d e …"
