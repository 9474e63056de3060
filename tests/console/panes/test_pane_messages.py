"""Each pane on its own: mounted in a bare `App` with the data handed in, keys pressed, and the messages
it posted asserted. Nothing here is an `ApcApp`: a pane that reached into the app would fail here.

The data is what a real engine answers, read through the console's client, exactly as the app reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from console.client.local import LocalClient
from console.client.wire import ProcessSummary, RunSummary
from console.keys.scoped import Permissions
from console.live.paging import Window, all_pages
from console.messages import (
    CancelRequested,
    ConsoleMessage,
    CopyRequested,
    DecideInRunRequested,
    DecideRequested,
    EventRequested,
    Notice,
    OpenRun,
    RowsWanted,
    SaveFileRequested,
    StartRunRequested,
    ViewTextRequested,
)
from console.panes.evidence import MAX_VIEW_BYTES, Checked, EvidencePane
from console.panes.processes import ProcessesPane
from console.panes.runs import RunsPane
from console.panes.work import WorkPane
from console.screens.run import RunDetail, RunScreen
from console.views.palette import Palette
from console.widgets.map_view import MapView
from engine.clock import ManualClock
from tests.console.console_support import Agent, press, run_view, settle, work_entries

PALETTE = Palette()
WRITES = Permissions(read_only=False)
READ_ONLY = Permissions(read_only=True)


class Harness(App[None]):
    """A bare app holding one widget (or, with `screen`, pushing one screen) and recording every
    message the console's panes post."""

    def __init__(self, widget: Widget | None = None) -> None:
        super().__init__()
        self.widget = widget
        self.posted: list[ConsoleMessage] = []

    def compose(self) -> ComposeResult:
        yield self.widget if self.widget is not None else Static("")

    @on(ConsoleMessage)
    def _record(self, message: ConsoleMessage) -> None:
        self.posted.append(message)

    def of(self, kind: type[ConsoleMessage]) -> list[Any]:
        return [message for message in self.posted if isinstance(message, kind)]


def fixed(moment: datetime) -> Callable[[], datetime]:
    return lambda: moment


async def runs_listed(client: LocalClient) -> list[RunSummary]:
    runs, _, error = await all_pages(lambda c: client.list_runs(cursor=c))
    assert error is None
    return runs


async def processes_listed(client: LocalClient) -> list[ProcessSummary]:
    processes, _, error = await all_pages(lambda c: client.list_processes(cursor=c))
    assert error is None
    return processes


async def test_the_work_pane_asks_to_decide_and_to_open_and_announces_new_work(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    first = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(first)
    entries = await work_entries(client)
    pane = WorkPane(WRITES, fixed(clock.now()))
    app = Harness(pane)
    async with app.run_test(size=(160, 40)) as pilot:
        pane.show(entries, {}, clock.now(), PALETTE)
        pane.table.focus()
        await settle(pilot)
        assert app.posted == []
        await press(pilot, "enter", "o")
        decided, opened = app.posted
        assert isinstance(decided, DecideRequested) and decided.entry == entries[0]
        assert isinstance(opened, OpenRun) and opened.run_id == first

        second = await agent.start("intake", {"ticket": "T-1"})
        pane.show(await work_entries(client), {}, clock.now(), PALETTE)
        await settle(pilot)
        [notice] = app.of(Notice)
        assert (notice.text, notice.severity, notice.live) == (
            f"New work: task fill_form · intake · {second}",
            "information",
            True,
        )


async def test_the_work_pane_offers_no_decision_when_read_only(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    await agent.screen(await agent.start("screening", {"vendorName": "Acme"}))
    pane = WorkPane(READ_ONLY, fixed(clock.now()))
    app = Harness(pane)
    async with app.run_test(size=(160, 40)) as pilot:
        pane.show(await work_entries(client), {}, clock.now(), PALETTE)
        pane.table.focus()
        await press(pilot, "d")
        assert pane.check_action("decide", ()) is False
        assert app.posted == []
        await press(pilot, "enter")
        assert [type(m) for m in app.posted] == [OpenRun], "read-only, Enter opens the item's run"
        await press(pilot, "o")
        assert [type(m) for m in app.posted] == [OpenRun, OpenRun]


async def test_the_runs_pane_asks_to_open_cancel_one_or_the_marked_and_to_read_more(
    client: LocalClient, agent: Agent
) -> None:
    started = [await agent.start("settlement", {"invoice": f"INV-{n}"}) for n in (1, 2, 3)]
    runs = await runs_listed(client)
    pane = RunsPane(WRITES)
    app = Harness(pane)
    async with app.run_test(size=(160, 40)) as pilot:
        pane.show(runs, True, PALETTE, [])
        pane.table.focus()
        await settle(pilot)
        shown = pane.table.keys
        assert sorted(shown) == sorted(started)
        await press(pilot, "o", "x")
        opened, cancel_one = [m for m in app.posted if not isinstance(m, RowsWanted)]
        assert isinstance(opened, OpenRun) and opened.run_id == shown[0]
        assert isinstance(cancel_one, CancelRequested) and cancel_one.runs == (pane.runs[shown[0]],)

        await press(pilot, "space", "down", "space", "X")
        assert pane.marked == {shown[0], shown[2]}
        [bulk] = app.of(CancelRequested)[1:]
        assert [run["id"] for run in bulk.runs] == [shown[0], shown[2]]

        await press(pilot, "m")
        wanted = app.posted[-1]
        assert isinstance(wanted, RowsWanted) and (wanted.source, wanted.window) == ("runs", Window(3, 3))

        await agent.call("send_event", runId=started[1], name="invoice-paid")
        pane.show(await runs_listed(client), False, PALETTE, [])
        await settle(pilot)
        assert pane.runs[started[1]]["state"] == "ended"
        assert app.of(Notice) == [], "runs that end are the app's news (from its reads), not the pane's"
        assert pane.check_action("load_more", ()) is None


async def test_the_processes_pane_draws_the_handed_document_and_asks_to_start_a_run(
    client: LocalClient,
) -> None:
    processes = await processes_listed(client)
    documents = {p["name"]: await client.process_document(p["name"], int(p["version"])) for p in processes}
    pane = ProcessesPane(WRITES)
    app = Harness(pane)
    async with app.run_test(size=(160, 40)) as pilot:
        pane.show(processes, documents, PALETTE)
        pane.table.focus()
        await settle(pilot)
        pane.table.move_cursor(row=pane.table.keys.index("screening"))
        await settle(pilot)
        drawing = pane.query_one("#process-map", MapView).drawing
        assert drawing is not None and set(drawing.boxes) == {"check_vendor", "approve", "decline", "done"}
        await press(pilot, "enter")
        [start] = app.posted
        assert isinstance(start, StartRunRequested) and start.process["name"] == "screening"


async def test_the_evidence_pane_lists_what_it_is_given_and_asks_to_view_save_and_copy(
    client: LocalClient, agent: Agent
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id, report=b"OFAC: no hits\n")
    view = await run_view(client, run_id)
    pane = EvidencePane(WRITES)
    app = Harness(pane)
    async with app.run_test(size=(160, 40)) as pilot:
        pane.show(view, PALETTE)
        pane.table.focus()
        await settle(pilot)
        [item] = pane.unchecked()
        assert item == view["data"]["steps"]["check_vendor"]["evidence"][0]
        assert pane.check_action("view_file", ()) is None
        content = b"OFAC: no hits\n"
        pane.record(item, Checked("report.txt", len(content), str(item.get("sha256")), True, content))
        pane.redraw()
        assert pane.unchecked() == []
        await press(pilot, "v", "S", "c")
        viewed, saved, copied = app.posted
        assert isinstance(viewed, ViewTextRequested)
        assert (viewed.title, viewed.text) == ("report.txt · check_vendor · 14 bytes", "OFAC: no hits\n")
        assert isinstance(saved, SaveFileRequested) and (saved.name, saved.content) == ("report.txt", content)
        assert isinstance(copied, CopyRequested) and copied.text == item.get("url")

        big = b"x" * (MAX_VIEW_BYTES + 1)
        pane.record(item, Checked("report.txt", len(big), "0" * 64, False, big))
        await press(pilot, "v")
        assert isinstance(app.posted[-1], Notice)
        assert app.posted[-1].text == "This file is too large to view here; save it instead."


async def test_the_run_screen_asks_to_decide_cancel_and_send_an_event(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    approval = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(approval)
    waiting = await agent.start("settlement", {"invoice": "INV-9"})
    app = Harness()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = RunScreen(approval, WRITES)
        await app.push_screen(screen)
        view = await run_view(client, approval)
        await screen.show(RunDetail(view), clock.now(), PALETTE)
        await settle(pilot)
        screen.table.move_cursor(row=[s["id"] for s in view["steps"]].index("approve"))
        await press(pilot, "d", "x")
        decided, cancel = app.posted
        # The run screen names the run and the step under the cursor; the app finds the caller's item.
        assert isinstance(decided, DecideInRunRequested)
        assert (decided.run_id, decided.step_id) == (approval, "approve")
        assert isinstance(cancel, CancelRequested) and cancel.runs == (view["run"],)
        assert screen.check_action("send_event", ()) is True

        settlement = await run_view(client, waiting)
        await screen.show(RunDetail(settlement), clock.now(), PALETTE)
        await press(pilot, "d", "e")
        [event] = app.posted[2:]
        assert isinstance(event, EventRequested) and event.view == settlement
        await press(pilot, "escape")
        assert not isinstance(app.screen, RunScreen) and isinstance(app.screen, Screen)
