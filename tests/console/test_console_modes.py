"""Remote mode over the MCP endpoint, and read-only mode: what each hides, and what still works."""

from __future__ import annotations

import hashlib
from pathlib import Path

from textual.widgets import TabbedContent

from console.app import ApcApp
from console.client.local import LocalClient
from console.client.remote import RemoteClient
from console.live.session import Session
from console.modals.decide import DecideDialog
from console.screens.run import RunScreen
from console.settings.config import ConsoleConfig
from console.widgets.live_table import LiveTable
from engine.clock import ManualClock
from engine.http.app import start_server
from tests.console.console_support import Agent, cells, make_app, open_engine, press, run_view, settle, shown
from tests.support.org import OPS, token
from tests.support.ports import free_port


async def test_remote_mode_decides_over_the_endpoint_and_hides_embedded_features(tmp_path: Path) -> None:
    clock = ManualClock()
    port = free_port()
    engine = await open_engine(tmp_path, clock, f"http://127.0.0.1:{port}")
    server = await start_server(engine, "127.0.0.1", port)
    client = RemoteClient(server.url, token(OPS))
    try:
        agent = Agent(engine)
        run_id = await agent.start("screening", {"vendorName": "Acme"})
        await agent.screen(run_id, report=b"no hits on either list\n")
        app = ApcApp(
            Session(client, f"remote · {server.url}", close=client.close),
            live=False,
            cursor_blink=False,
            config=ConsoleConfig(),
        )
        async with app.run_test(size=(160, 48)) as pilot:
            await app.ready.wait()
            assert shown(app, "#status").startswith(f" token …0001 (person) · remote · {server.url}")
            assert app.check_action("publish", ()) is False
            assert app.check_action("switch_identity", ()) is False
            assert app.check_action("show_tab", ("endpoint",)) is False
            await press(pilot, "o")
            assert isinstance(app.screen, RunScreen)
            app.screen.query_one("#run-tabs", TabbedContent).active = "run-evidence"
            await settle(pilot)
            row = cells(app.screen.query_one("#evidence-table", LiveTable), "check_vendor/c/0")
            sha = hashlib.sha256(b"no hits on either list\n").hexdigest()
            assert [c.plain for c in row[1:6]] == ["file", "report.txt", "✓ match", "23", sha[:16]]
            assert shown(app, "#run-map-view Static").startswith(
                "This server does not hand out process documents, so the map cannot be drawn. Steps in order:"
            )
            await press(pilot, "d")
            assert isinstance(app.screen, DecideDialog)
            await press(pilot, "a", "ctrl+s", "y")
        view = await run_view(LocalClient(engine, client.identity), run_id)
        assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "onboarded")
        assert view["data"]["steps"]["approve"]["by"] == "ops@example.com"
    finally:
        await server.stop()
        await engine.close()


async def test_read_only_hides_every_write(client: LocalClient, agent: Agent, clock: ManualClock) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id)
    app = make_app(client, clock, read_only=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await settle(pilot)  # the runs list is read after the first screen
        assert shown(app, "#status") == (
            " ops@example.com (person, operator) · embedded · test · READ-ONLY · work 1 · runs 1"
            " · manual refresh · read 09:00:00"
        )
        work = app.main.work
        assert work.check_action("decide", ()) is False
        assert work.check_action("open_run", ()) is True
        assert app.check_action("start_run", ()) is False
        await press(pilot, "enter")
        opened = app.screen
        assert isinstance(opened, RunScreen)  # read-only: Enter opens the item's run, not a form
        await press(pilot, "escape")
        assert app.screen is app.main
        await press(pilot, "o")
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        assert [
            run_screen.check_action(a, ()) for a in ("decide", "cancel_run", "send_event", "show_map")
        ] == [
            False,
            False,
            False,
            True,
        ]
    view = await run_view(client, run_id)
    assert view["run"]["state"] == "waiting"
