"""Closing the console at any moment of its start-up: nothing fails on the way out, nothing is left running."""

from __future__ import annotations

import asyncio

import pytest
from textual import events

import console.app
from console.client import Envelope
from console.client.local import LocalClient
from console.client.wire import GetRunResult
from engine.clock import ManualClock
from tests.console.console_support import Agent, make_app, settle


async def test_closing_as_the_first_screen_dates_its_rows_fails_nothing(
    client: LocalClient, agent: Agent, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows of the first screen are dated after it is written (`_after_first_screen`): a date
    read that ends while the app closes finds the panes taken down, which is no error."""
    await agent.screen(await agent.start("screening", {"vendorName": "Acme"}))
    app = make_app(client, clock)
    read = client.get_run
    dating: list[str] = []

    async def get_run_as_the_app_closes(run_id: str) -> Envelope[GetRunResult]:
        """Answers once the filter bar, which the dating reads next, is taken down by the closing app."""
        dating.append(run_id)
        select = app.main.query_one("#work-process")
        while select.parent is not None:
            await asyncio.sleep(0)
        return await read(run_id)

    monkeypatch.setattr(client, "get_run", get_run_as_the_app_closes)
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        while not dating:
            await asyncio.sleep(0)
    assert len(dating) == 1


async def test_a_worker_cancelled_as_the_app_closes_is_not_left_behind(
    client: LocalClient, agent: Agent, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual cancels the workers as the app closes but does not wait for them: one cancelled in
    the middle of a read (here the first screen's dates, a read that never answers) was left in
    `app.workers`, still cancelling, after the app had closed. The console waits for them."""
    await agent.screen(await agent.start("screening", {"vendorName": "Acme"}))
    app = make_app(client, clock, live=True)
    dating: list[str] = []

    async def get_run_never_answers(run_id: str) -> Envelope[GetRunResult]:
        dating.append(run_id)
        await asyncio.Event().wait()
        raise AssertionError("a read that never answers answered")

    monkeypatch.setattr(client, "get_run", get_run_never_answers)
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        while not dating:
            await asyncio.sleep(0)
    assert list(app.workers) == []


async def test_a_tab_shown_as_the_console_comes_up_stays_shown(
    client: LocalClient, clock: ManualClock
) -> None:
    """`2` pressed as the console came up could show the work queue again: the work table, hidden with its
    tab, gave its focus to a sibling in that tab (Textual's way), whose tab then asked to be shown.
    The hide is handled here before the runs tab is shown, as it can be on a busy machine."""
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        table = app.main.query_one("#work-table")
        app.main.show_tab("runs")
        table._on_hide(events.Hide())
        await settle(pilot)
        assert app.main.active_tab == "runs"
        assert app.focused is app.main.query_one("#runs-table")


async def test_the_console_ends_when_its_terminal_hangs_up(
    client: LocalClient, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung-up terminal is no longer a tty: the check (each second, on a real terminal) ends the app
    with TERMINAL_GONE, and leaves it alone while the terminal is there."""
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        monkeypatch.setattr(console.app, "terminal_open", lambda: True)
        app._check_terminal()
        await pilot.pause()
        assert app.is_running
        monkeypatch.setattr(console.app, "terminal_open", lambda: False)
        app._check_terminal()
        await pilot.pause()
    assert not app.is_running
    assert app.return_code == console.app.TERMINAL_GONE == 1
