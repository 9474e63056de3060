"""A decision prepared before a sibling branch completed is `stale`: re-read, see what changed, send again."""

from __future__ import annotations

from textual.widgets import Button, Checkbox

from console.client.local import LocalClient
from console.modals.decide import DecideDialog
from engine.clock import ManualClock
from engine.core import Engine
from tests.console.console_support import OPS, Agent, click, make_app, press, run_view, settle, shown


async def test_stale_decision_is_reread_shows_the_change_and_is_sent_again(
    client: LocalClient, agent: Agent, clock: ManualClock, engine: Engine
) -> None:
    run_id = await agent.start("review-pair", {"contract": "C-7"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        keys = app.main.work.table.keys
        legal = next(k for k in keys if app.main.work.entries[k]["workItem"]["stepId"] == "legal")
        app.main.work.table.move_cursor(row=keys.index(legal))
        await press(pilot, "enter", "c")
        form = app.screen
        assert isinstance(form, DecideDialog)
        await settle(pilot)
        form.query_one("#field-fine", Checkbox).value = True

        finance = next(e for e in app.main.work.entries.values() if e["workItem"]["stepId"] == "finance")
        clock.advance(minutes=3)
        sibling = await engine.call(
            OPS,
            "decide",
            {
                **finance["workItem"]["decide"]["arguments"],
                "requestId": "sibling-1",
                "decision": "completed",
                "output": {"fine": False},
            },
        )
        assert sibling["ok"], sibling

        await press(pilot, "ctrl+s", "y")
        assert shown(app, "#problem").splitlines() == [
            "The server did not accept this decision:",
            "stale: the run data changed since this snapshot; read the run again",
            "The run changed since this form was read. Re-read it, check what changed, and send again.",
        ]
        assert form.query_one("#reread", Button).display
        await click(pilot, "#reread")
        assert shown(app, "#changes").splitlines() == [
            "What changed in the run data:",
            "+ steps.finance.output.fine: false",
            "+ steps.finance.by: ops@example.com",
            "+ steps.finance.at: 2026-10-06T09:03:00Z",
        ]
        assert (
            shown(app, "#problem")
            == "Re-read: the snapshot is current again. Check what changed, then send again."
        )
        await press(pilot, "ctrl+s", "y")
        view = await run_view(client, run_id)
        assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "reviewed")
        assert view["data"]["steps"]["legal"]["output"] == {"fine": True}
