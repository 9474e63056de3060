"""The runs list as an operator uses it: search (a whole run id opens the run, anything else searches
the loaded rows), a cursor that stays on its run (newer runs in sight at the top, else `newer runs above`),
marks (not on ended runs, `U` clears them), a bulk cancel that `esc` stops, and the input filter read
as `field=value` pairs."""

from __future__ import annotations

import asyncio

import pytest
from rich.cells import cell_len
from textual.widgets import Input
from textual.worker import WorkerCancelled, WorkerState

from console.client.local import LocalClient
from console.client.wire import CancelResult, Envelope
from console.modals.common import ReasonDialog
from console.panes.runs import parse_input_filter
from console.screens.run import RunScreen
from engine.clock import ManualClock
from engine.core import Engine
from tests.console.console_support import OPS, Agent, cells, make_app, press, settle, shown, type_into


async def test_a_whole_run_id_opens_the_run_and_anything_else_searches_the_loaded_rows(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    screening = [await agent.start("screening", {"vendorName": name}) for name in ("A", "B")]
    intake = await agent.start("intake", {"ticket": "T-1"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        runs = app.main.runs
        assert set(runs.table.keys) == {*screening, intake}
        later = await agent.start("intake", {"ticket": "T-2"})
        await press(pilot, "slash")
        search = runs.query_one("#runs-search", Input)
        assert app.focused is search
        search.value = later
        await press(pilot, "enter")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.run_id == later
        assert search.value == ""
        await press(pilot, "escape", "slash")
        await press(pilot, *"ree")
        assert set(runs.table.keys) == set(screening)
        assert shown(app, "#runs-status") == "1–2 of 2 runs · search 'ree' among the 4 loaded runs"
        search.value = intake[:8]
        await press(pilot, "enter")
        assert runs.table.has_focus
        assert not isinstance(app.screen, RunScreen)
        assert runs.table.keys == [intake]
        search.value = "intake"
        await press(pilot, "slash", "enter")
        assert set(runs.table.keys) == {intake, later}
        assert app.lists.runs_query == {"process": "intake"}
        assert shown(app, "#runs-status") == "1–2 of 2 runs"


async def test_the_cursor_keeps_its_run_the_view_at_the_top_shows_newer_runs_further_down_counts_them(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    for number in range(30):
        clock.advance(seconds=1)
        await agent.start("intake", {"ticket": f"T-{number}"})
    app = make_app(client, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        table = app.main.runs.table
        assert (table.cursor_row, table.window.first) == (0, 0)
        chosen = table.current_key
        clock.advance(seconds=1)
        newest = await agent.start("intake", {"ticket": "T-new"})
        await app.reload_all()
        await settle(pilot)
        assert (table.current_key, table.cursor_row, table.window.first) == (chosen, 1, 0)
        assert table.key_at(0) == newest
        assert shown(app, "#runs-status").startswith("1–")
        rows = table.visible_rows
        await press(pilot, *["j"] * (rows - 1))
        assert (table.cursor_row, table.window.first) == (rows, 1), "the last row in view, the view one down"
        pinned = table.current_key
        for number in range(2):
            clock.advance(seconds=1)
            await agent.start("intake", {"ticket": f"T-newer-{number}"})
        await app.reload_all()
        await settle(pilot)
        assert (table.current_key, table.cursor_row, table.window.first) == (pinned, rows + 2, 3)
        assert shown(app, "#runs-status").startswith("↑ 2 newer runs above (g) · 4–")
        await press(pilot, *["k"] * rows)
        assert (table.cursor_row, table.window.first) == (2, 2)
        assert shown(app, "#runs-status").startswith("↑ 2 newer runs above (g) · 3–")
        await press(pilot, "k")
        assert table.window.first == 1
        assert shown(app, "#runs-status").startswith("↑ 1 newer run above (g) · 2–")
        await press(pilot, "g")
        assert not shown(app, "#runs-status").startswith("↑")


async def test_ended_runs_cannot_be_marked_and_U_clears_every_mark(
    client: LocalClient, agent: Agent, clock: ManualClock, engine: Engine
) -> None:
    runs = [await agent.start("screening", {"vendorName": name}) for name in ("A", "B", "C")]
    await engine.call(OPS, "cancel", {"runId": runs[1], "reason": "Duplicate.", "requestId": "x-1"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        pane, table = app.main.runs, app.main.runs.table
        table.move_cursor(row=table.keys.index(runs[1]))
        await press(pilot, "space")
        assert pane.marked == set()
        assert shown(app, "#notice") == (
            f"{runs[1]} was cancelled: only active or waiting runs can be marked to cancel"
        )
        for run_id in (runs[0], runs[2]):
            table.move_cursor(row=table.keys.index(run_id))
            await press(pilot, "space")
        assert pane.marked == {runs[0], runs[2]}
        assert "2 marked" in shown(app, "#runs-status")
        await press(pilot, "U")
        assert pane.marked == set()
        assert [cells(table, key)[0].plain for key in table.keys] == [" ", " ", " "]
        assert "marked" not in shown(app, "#runs-status")


async def test_a_marked_row_is_drawn_as_wide_as_the_others_with_every_column_in_place(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    """`●` is one cell (Rich and the C library's wcwidth agree; East Asian "ambiguous", so a terminal
    set to draw those wide would shift the row, not the table): the marked row's line has the width of
    the table and its run id in the cell every other row has it."""
    runs = [await agent.start("screening", {"vendorName": name}) for name in ("A", "B")]
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        table = app.main.runs.table
        table.move_cursor(row=table.keys.index(runs[0]))
        await press(pilot, "space")
        width = table.scrollable_content_region.width
        lines = []
        for y in range(1, 3):  # line 0 is the header, then the rows in the table's order
            strip = table.render_line(y)
            text = "".join(segment.text for segment in strip)
            assert (strip.cell_length, cell_len(text), len(text)) == (width, width, width)
            lines.append(text)
        header = "".join(segment.text for segment in table.render_line(0))
        assert header.index("Run") == 4
        marked, other = (lines[table.keys.index(run)] for run in runs)
        assert (marked[:4], other[:4]) == (" ●  ", "    ")
        assert marked.index("screening") == other.index("screening") == header.index("Process")


async def test_esc_stops_a_bulk_cancel_tells_what_was_done_and_the_worker_ends_cancelled(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    runs = [await agent.start("screening", {"vendorName": name}) for name in ("A", "B", "C")]
    answered = 0
    stuck = asyncio.Event()
    real_cancel = client.cancel

    async def cancel(run_id: str, reason: str) -> Envelope[CancelResult]:
        nonlocal answered
        if answered == 1:
            stuck.set()
            await asyncio.Event().wait()
        answered += 1
        return await real_cancel(run_id, reason)

    client.cancel = cancel  # type: ignore[method-assign]
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        table = app.main.runs.table
        for run_id in runs:
            table.move_cursor(row=table.keys.index(run_id))
            await press(pilot, "space")
        await press(pilot, "X")
        assert isinstance(app.screen, ReasonDialog)
        type_into(app, "#reason", "Vendor withdrew.")
        await pilot.press("ctrl+s")
        await asyncio.wait_for(stuck.wait(), 10)
        (worker,) = [w for w in app.workers if w.group == "cancel"]
        await pilot.press("escape")
        with pytest.raises(WorkerCancelled):
            await asyncio.wait_for(worker.wait(), 10)
        await settle(pilot)
        assert worker.state == WorkerState.CANCELLED
        done = next(key for key in table.keys if key in runs)
        summary = "1 of 3 cancelled, 0 failed, stopped with 2 left"
        assert app.toasts[-3:] == ["Stopped", f"{done} cancelled", summary]
        assert app.main.runs.marked == set(runs) - {done}


def test_input_filters_read_json_values_and_name_what_they_cannot_read() -> None:
    assert parse_input_filter("vendorName=Acme, amount=48000, urgent=true, bad") == (
        {"vendorName": "Acme", "amount": 48000, "urgent": True},
        ["'bad': write field=value"],
    )
    assert parse_input_filter("") == ({}, [])
