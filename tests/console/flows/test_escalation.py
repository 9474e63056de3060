"""Escalations in the operators' queue: send one back with a note, or finish it in the agent's place."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Checkbox, Select

from console.client.local import LocalClient
from console.modals.decide import DecideDialog
from engine.clock import ManualClock
from tests.console.console_support import Agent, cells, click, make_app, press, run_view, shown, type_into


async def test_return_an_escalation_with_a_note_hands_it_back_to_the_agent(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.escalate(run_id, "The EU list portal is down.")
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        key = app.main.work.table.keys[0]
        flags, kind, *_, text = cells(app.main.work.table, key)
        assert (flags.plain, kind.plain, text.plain) == ("⚑ ", "escalation", "The EU list portal is down.")
        detail = shown(app, "#work-detail").splitlines()
        assert detail[0] == "escalated by a_screener at 2026-10-06 09:00: The EU list portal is down."
        assert detail[2] == "assigned to operators · due —"
        assert detail[-1] == "decisions: returned, completed, failed"
        await press(pilot, "enter")
        assert isinstance(app.screen, DecideDialog)
        await click(pilot, "#decision-returned")
        type_into(app, "#note", "Retry after 10:00; the portal is back then.")
        await press(pilot, "ctrl+s", "y")
        assert app.toasts[0] == f"returned check_vendor: {run_id[:6]}… now active at check_vendor"
    claim = await agent.call("claim", runId=run_id, stepId="check_vendor")
    assert claim["handoff"] == {
        "returned": {
            "note": "Retry after 10:00; the portal is back then.",
            "by": "ops@example.com",
            "at": "2026-10-06T09:00:00Z",
        }
    }


async def test_complete_an_escalation_in_the_agents_place(
    client: LocalClient, agent: Agent, clock: ManualClock, tmp_path: Path
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.escalate(run_id, "Cannot reach the screening service.")
    report = tmp_path / "manual-report.txt"
    report.write_bytes(b"checked by hand: no hits\n")
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter")
        form = app.screen
        assert isinstance(form, DecideDialog)
        await click(pilot, "#decision-completed")
        form.query_one("#field-cleared", Checkbox).value = True
        type_into(app, "#field-summary", "No hits on either list.")
        type_into(app, "#evidence-path", str(report))
        await click(pilot, "#attach")
        form.query_one("#route", Select).value = "approve"
        type_into(app, "#reason", "Cleared by a manual check.")
        await press(pilot, "ctrl+s", "y")
        view = await run_view(client, run_id)
        record = view["data"]["steps"]["check_vendor"]
        assert record["output"] == {"cleared": True, "summary": "No hits on either list."}
        assert (record["next"], record["reason"], record["by"]) == (
            "approve",
            "Cleared by a manual check.",
            "ops@example.com",
        )
        assert {s["id"]: s["state"] for s in view["steps"]}["approve"] == "waiting"
        assert [e["stepId"] for e in (item["workItem"] for item in app.main.work.entries.values())] == [
            "approve"
        ]
