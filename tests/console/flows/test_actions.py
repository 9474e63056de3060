"""Run actions: cancel with a reason, bulk cancel of marked runs, start a run, send an event."""

from __future__ import annotations

from textual.widgets import Input, OptionList, RadioButton, TextArea

from console.client.local import LocalClient
from console.modals.common import ReasonDialog
from console.modals.event import EventDialog
from console.modals.start import StartRunDialog
from console.screens.run import RunScreen
from engine.clock import ManualClock
from engine.core import Engine
from tests.console.console_support import OPS, Agent, cells, make_app, press, run_view, shown, type_into


async def test_cancel_asks_for_the_reason_naming_the_run(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        assert app.main.runs.table.keys == [run_id]
        await press(pilot, "x")
        dialog = app.screen
        assert isinstance(dialog, ReasonDialog)
        assert dialog.dialog_title == f"Cancel run {run_id} (screening, active)"
        await press(pilot, "ctrl+s")
        assert shown(app, "#problem") == "reason: required"
        type_into(app, "#reason", "Duplicate request.")
        await press(pilot, "ctrl+s")
        assert app.toasts == [f"{run_id} cancelled"]
        view = await run_view(client, run_id)
        assert view["run"]["ended"] == {
            "by": "ops@example.com",
            "at": "2026-10-06T09:00:00Z",
            "note": "Duplicate request.",
        }


async def test_bulk_cancel_of_marked_runs_reports_each_run(
    client: LocalClient, agent: Agent, clock: ManualClock, engine: Engine
) -> None:
    runs = [await agent.start("screening", {"vendorName": name}) for name in ("A", "B", "C")]
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        table = app.main.runs.table
        table.move_cursor(row=table.keys.index(runs[0]))
        await press(pilot, "space")
        table.move_cursor(row=table.keys.index(runs[2]))
        await press(pilot, "space")
        assert app.main.runs.marked == {runs[0], runs[2]}
        assert cells(table, runs[0])[0].plain == "●"
        gone = await engine.call(
            OPS, "cancel", {"runId": runs[2], "reason": "Closed elsewhere.", "requestId": "x-1"}
        )
        assert gone["ok"]
        await press(pilot, "X")
        dialog = app.screen
        assert isinstance(dialog, ReasonDialog)
        assert dialog.dialog_title == "Cancel 2 marked runs"
        marked = [k for k in table.keys if k in {runs[0], runs[2]}]
        assert shown(app, ".subject").splitlines() == [
            *(f"{run_id} · screening v1 · active" for run_id in marked),
            "Cancelling does not undo anything the run already caused outside the server.",
        ]
        type_into(app, "#reason", "Vendor withdrew.")
        await press(pilot, "ctrl+s")
        assert app.screen is app.main
        told = [
            f"{run_id} cancelled"
            if run_id == runs[0]
            else f"{run_id} not cancelled: conflict: the run has ended"
            for run_id in marked
        ]
        elsewhere = f"Run {runs[2]} cancelled (screening)"  # news of the read after the cancels
        assert app.toasts == [elsewhere, *told, "1 of 2 cancelled, 1 failed"]
        assert shown(app, "#notice") == "1 of 2 cancelled, 1 failed"
        await press(pilot, "5")
        log = [line[9:] for line in shown(app, "#activity-text").splitlines()]
        assert log == ["1 of 2 cancelled, 1 failed", *reversed(told), elsewhere]
        assert app.main.runs.marked == {runs[2]}
        states = {r: (await run_view(client, r))["run"]["state"] for r in runs}
        assert states == {runs[0]: "cancelled", runs[1]: "active", runs[2]: "cancelled"}


async def test_start_a_test_run_from_the_declared_inputs(client: LocalClient, clock: ManualClock) -> None:
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "n")
        choices = app.screen.query_one(OptionList)
        labels = [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]
        choices.highlighted = next(i for i, label in enumerate(labels) if label.startswith("screening v1"))
        await press(pilot, "enter")
        dialog = app.screen
        assert isinstance(dialog, StartRunDialog)
        type_into(app, "#field-amount", "lots")
        await press(pilot, "ctrl+s")
        assert shown(app, "#problem").splitlines() == [
            "Not sent; fix these first:",
            "inputs.amount: expected number, written like 1200 or 0.5",
            "inputs.vendorName: missing",
        ]
        type_into(app, "#field-vendorName", "Acme")
        type_into(app, "#field-amount", "48000")
        dialog.query_one("#mode-test", RadioButton).value = True
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, RunScreen)
        run_id = app.screen.run_id
        assert app.toasts[0] == f"Started screening: {run_id} active at check_vendor"
        view = await run_view(client, run_id)
        assert (view["run"]["mode"], view["data"]["inputs"]) == (
            "test",
            {"vendorName": "Acme", "amount": 48000},
        )
        assert shown(app, "#run-header").splitlines()[0] == f"run {run_id} · screening v1 · TEST RUN · active"


async def test_send_an_event_from_the_run_detail(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("settlement", {"invoice": "INV-9"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        await press(pilot, "enter")
        assert isinstance(app.screen, RunScreen)
        await press(pilot, "e")
        dialog = app.screen
        assert isinstance(dialog, EventDialog)
        assert app.screen.query_one("#event-name", Input).value == "invoice-paid"
        dialog.query_one("#event-data", TextArea).load_text("[1]")
        await press(pilot, "ctrl+s")
        assert shown(app, "#problem") == "data: expected a JSON object"
        dialog.query_one("#event-data", TextArea).load_text('{"amount": 100.25}')
        await press(pilot, "ctrl+s")
        assert app.toasts[0] == f"Event invoice-paid to {run_id}: consumed by step paid"
        view = await run_view(client, run_id)
        assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "settled")
        assert view["data"]["steps"]["paid"]["output"] == {"amount": 100.25}
        assert shown(app, "#run-header").splitlines()[0] == f"run {run_id} · settlement v1 · ended (settled)"
