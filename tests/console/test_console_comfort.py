"""Help, palette, themes, live refresh and pause, toasts, vim keys, filters and sorting."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Select

from console.client.local import LocalClient
from console.modals.common import ChoiceDialog
from console.modals.help import HelpDialog
from console.settings.config import ConsoleConfig
from engine.clock import ManualClock
from tests.console.console_support import Agent, cells, make_app, press, settle, shown, type_into


async def test_help_shows_the_focused_panes_keys_first(client: LocalClient, clock: ManualClock) -> None:
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpDialog)
        assert app.screen.dialog_title == "Help: Work queue"
        lines = shown(app, "#help-text").splitlines()
        assert lines[0] == "Work queue"
        assert lines.index("Tables") < lines.index("Everywhere")
        assert "  enter, d      Decide: Open the decision form" in lines
        assert "  /             Filter: Filter by text" in lines
        assert lines.index("Work queue") < lines.index("Everywhere")
        await press(pilot, "escape")
        await press(pilot, "f1")
        assert isinstance(app.screen, HelpDialog)


async def test_the_palette_offers_the_registry_actions_that_apply(
    client: LocalClient, clock: ManualClock
) -> None:
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await press(pilot, "ctrl+p")
        await press(pilot, *"start run")
        await press(pilot, "enter")
        assert isinstance(app.screen, ChoiceDialog)
        assert app.screen.dialog_title == "Start a run of which process?"


async def test_read_only_keeps_writes_out_of_the_palette(client: LocalClient, clock: ManualClock) -> None:
    from console.keys.commands import available

    app = make_app(client, clock, read_only=True)
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        offered = {spec.id for spec, _ in available(app.screen)}
        assert "work.decide" not in offered and "app.start" not in offered and "app.publish" not in offered
        assert {"work.filter", "app.refresh", "app.identity", "table.down"} <= offered


async def test_a_picked_theme_is_applied_and_remembered(
    client: LocalClient, clock: ManualClock, tmp_path: Path
) -> None:
    path = tmp_path / "console.toml"
    app = make_app(client, clock, config=ConsoleConfig.load(path))
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        assert app.theme == "harbor"
        app.theme = "paper"
        assert ConsoleConfig.load(path).theme == "paper"
        assert app.palette.warning == "bold #B35C00"
    again = make_app(client, clock, config=ConsoleConfig.load(path))
    async with again.run_test(size=(120, 40)):
        await again.ready.wait()
        assert again.theme == "paper"


async def test_pause_stops_the_live_refresh_and_says_so(client: LocalClient, clock: ManualClock) -> None:
    app = make_app(client, clock, live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        assert " · live every 2s · " in shown(app, "#status")
        await press(pilot, "p")
        assert " · PAUSED (p) · " in shown(app, "#status")
        assert app.toasts == ["Live refresh paused"]
        before = len(app.workers)
        app.live_refresh.tick()
        assert len(app.workers) == before
        await press(pilot, "p")
        assert app.toasts[-1] == "Live refresh resumed"


async def test_the_runs_count_shows_only_while_the_runs_list_is_live(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    """A tick reads the runs list only while its tab is shown: elsewhere a count read once would pass
    for a live one (`runs 1` for the whole demo), so the status line leaves it out."""
    await agent.start("screening", {"vendorName": "Acme"})
    app = make_app(client, clock, live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await settle(pilot)  # the runs list's first page is read after the first screen
        assert app.lists.runs.started
        assert " · work 0 · live every " in shown(app, "#status")  # every 2s, or more once backed off
        await agent.start("screening", {"vendorName": "Bolt"})
        await press(pilot, "2")
        await settle(pilot)
        assert " · work 0 · runs 2 · live every " in shown(app, "#status")
        await press(pilot, "1")
        assert " · work 0 · live every " in shown(app, "#status")  # every 2s, or more once backed off


async def test_a_tick_that_fires_while_the_app_closes_starts_no_reload(
    client: LocalClient, clock: ManualClock
) -> None:
    """Textual cancels the workers, then stops the timers: a tick in between would start a reload
    that reads panes being taken down (NoMatches on the way out, on a loaded machine)."""
    app = make_app(client, clock, live=True)
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
    assert not app.is_running
    assert list(app.workers) == []  # the app waits for the workers it cancels (test_console_closing)
    app.live_refresh.tick()
    assert list(app.workers) == []


async def test_new_and_overdue_items_are_announced(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    first = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(first)
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await settle(pilot)  # what the first screen did not wait for is read after it
        assert app.toasts == []
        second = await agent.start("screening", {"vendorName": "Bolt"})
        await agent.screen(second)
        await app.reload_all()
        await pilot.pause()  # the notices are messages the pane posts
        assert app.toasts == [f"New work: approve approve · screening · {second}"]
        clock.advance(days=2, minutes=1)
        await app.reload_all()
        await pilot.pause()
        assert app.toasts[1:] == [
            f"Overdue: approve · screening · {first}",
            f"Overdue: approve · screening · {second}",
        ]
        due_cell = cells(app.main.work.table, app.main.work.table.keys[0])[6]
        assert (due_cell.plain, str(due_cell.style)) == ("1m late", app.palette.warning)


async def test_vim_keys_move_through_the_table(client: LocalClient, agent: Agent, clock: ManualClock) -> None:
    for name in ("A", "B", "C"):
        await agent.screen(await agent.start("screening", {"vendorName": name}))
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        table = app.main.work.table
        await press(pilot, "j", "j")
        assert table.cursor_row == 2
        await press(pilot, "k")
        assert table.cursor_row == 1
        await press(pilot, "g")
        assert table.cursor_row == 0
        await press(pilot, "G")
        assert table.cursor_row == 2


async def test_filters_and_sort_change_rows_the_process_filter_on_the_server(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    task = await agent.start("intake", {"ticket": "T-1"})
    clock.advance(hours=1)
    late = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(late)
    clock.advance(days=1)
    soon = await agent.start("screening", {"vendorName": "Bolt"})
    await agent.screen(soon)
    clock.advance(days=1, hours=1)
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        work = app.main.work
        runs_of = lambda: [work.entries[k]["runId"] for k in work.table.keys]  # noqa: E731
        # The server's order: oldest work item first, which is what `by age` means.
        assert runs_of() == [task, late, soon]
        assert work.table.cursor_row == 0 and work.table.has_focus
        kind = work.query_one("#work-kind", Select)
        kind.focus()
        kind.value = "approve"
        await settle(pilot)
        assert runs_of() == [late, soon]
        assert work.table.has_focus, "a filter chosen sends the keys back to the table"
        kind.value = Select.NULL
        await settle(pilot)
        await press(pilot, "exclamation_mark")
        assert runs_of() == [late]
        await press(pilot, "exclamation_mark")
        await press(pilot, "K")
        assert runs_of() == [late, soon]
        await press(pilot, "K")
        assert runs_of() == [task]
        await press(pilot, "K", "K")
        await press(pilot, "slash")
        assert isinstance(app.focused, Input)
        await press(pilot, *"intake")
        assert runs_of() == [task]
        await press(pilot, "enter")
        assert app.focused is not None and app.focused.id == "work-table"
        type_into(app, "#work-filter", "")
        await press(pilot, "f")
        assert runs_of() == [task]
        await press(pilot, "f")
        assert runs_of() == [late, soon]
        await press(pilot, "f")
        assert runs_of() == [task, late, soon]
        await press(pilot, "s")
        assert runs_of() == [late, soon, task]
        assert [cells(work.table, k)[6].plain for k in work.table.keys] == ["1h late", "in 23h", "—"]
