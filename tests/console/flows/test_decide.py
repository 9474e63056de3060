"""Deciding work items from the console, against the embedded engine: approve, reject, escalations."""

from __future__ import annotations

from textual.widgets import Button

from console.client.local import LocalClient
from console.client.wire import RunView
from console.modals.decide import DecideDialog
from console.screens.run import RunScreen
from engine.clock import ManualClock
from tests.console.console_support import Agent, click, make_app, press, run_view, settle, shown, type_into


def step_states(view: RunView) -> dict[str, str | None]:
    return {s["id"]: s["state"] for s in view["steps"]}


async def test_approve_from_the_work_queue_ends_the_run(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id)
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        item_id = next(iter(app.main.work.entries.values()))["workItem"]["id"]
        assert app.main.work.table.keys == [f"{run_id}/{item_id}"]
        await press(pilot, "enter")
        assert isinstance(app.screen, DecideDialog)
        assert app.screen.decision is None
        assert str(app.screen.query_one("#submit", Button).label) == "Send (choose a decision)"
        await press(pilot, "a")
        submit = app.screen.query_one("#submit", Button)
        assert str(submit.label) == f"Approve approve on {run_id[:6]}…"
        # the button grew with its new label: all of it shows, with a cell of room each side
        assert submit.size.width == len(f"Approve approve on {run_id[:6]}…") + 2
        await press(pilot, "ctrl+s")
        assert shown(app, "#confirm") == f"Approve approve on {run_id[:6]}… (screening)? y/n"
        await press(pilot, "y")
        view = await run_view(client, run_id)
        assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "onboarded")
        assert view["data"]["steps"]["approve"]["decision"] == "approved"
        assert view["data"]["steps"]["approve"]["by"] == "ops@example.com"
        assert app.toasts == [
            f"approved approve: {run_id[:6]}… now ended: onboarded",
            f"Run {run_id} ended: onboarded (screening)",
        ]
        assert app.main.work.table.keys == []


async def test_reject_needs_a_note_then_sends_the_step_back_for_rework(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id, report=b"first report\n")
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter")
        await press(pilot, "x")
        await click(pilot, "#submit")
        assert shown(app, "#problem") == "Not sent; fix these first:\nnote: required"
        type_into(app, "#note", "The report covers only the EU list.")
        await press(pilot, "ctrl+s", "y")
        view = await run_view(client, run_id)
        assert view["run"]["state"] == "active"
        assert step_states(view)["check_vendor"] == "ready"
        assert step_states(view)["approve"] is None
        approve = view["data"]["steps"]["approve"]
        assert (approve["decision"], approve["note"]) == ("rejected", "The report covers only the EU list.")
        assert app.main.work.table.keys == []

        clock.advance(minutes=5)
        await agent.screen(run_id, report=b"second report, both lists\n")
        await app.reload_all()
        entry = next(iter(app.main.work.entries.values()))
        assert app.toasts[-1] == f"New work: approve approve · screening · {run_id}"
        app.open_run(run_id)
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)
        app.screen.table.move_cursor(row=0)
        await settle(pilot)
        detail = shown(app, "#step-detail")
        assert detail.splitlines()[:3] == [
            "check_vendor · agent · done",
            "current",
            "  done by a_screener at 2026-10-06 09:05",
        ]
        assert "attempt 1 (history)" in detail
        assert "  changed from the attempt before:" in detail
        assert entry["workItem"]["stepId"] == "approve"
