"""The decision form as a split view: what the decision is about on the left, an explicit choice and a
one-line confirmation on the right."""

from __future__ import annotations

from textual.widgets import OptionList, RadioButton, RadioSet, TabbedContent, TextArea

from console.client.local import LocalClient
from console.modals.common import ChoiceDialog, TextDialog
from console.modals.decide import DecideDialog
from console.modals.decide_context import input_table
from console.screens.run import RunScreen
from console.settings.config import ConsoleConfig
from console.views.palette import Palette
from engine.clock import ManualClock
from tests.console.console_support import Agent, make_app, press, run_view, settle, shown, type_into


async def test_the_left_half_shows_inputs_earlier_steps_evidence_and_due(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme", "amount": 48000})
    await agent.screen(run_id, report=b"no hits on either list\n")
    clock.advance(days=3)
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter")
        form = app.screen
        assert isinstance(form, DecideDialog)
        await settle(pilot)
        context = shown(app, "#context").splitlines()
        assert context[0] == "due 2026-10-08 09:00 · OVERDUE, 1d late"
        assert context[1] == f"approve · step approve · run {run_id}"
        at = context.index("inputs")
        assert context[at : at + 3] == ["inputs", "  vendorName  Acme", "  amount      48000"]
        seen = context.index("steps this step can see")
        assert context[seen + 1 : seen + 8] == [
            "check_vendor",
            "  done by a_screener at 2026-10-06 09:00",
            "  output",
            "    cleared: true",
            "    summary: Both lists checked.",
            "  summary: Searched OFAC and EU by legal name.",
            "  next: approve — reason: Vendor is cleared.",
        ]
        assert context[seen + 8].startswith("  evidence file: f_")
        # Evidence files open in the viewer from the left half.
        options = form.query_one("#context-evidence", OptionList)
        assert options.option_count == 1
        options.focus()
        await press(pilot, "down", "enter")
        assert isinstance(app.screen, TextDialog)
        assert app.screen.text == "no hits on either list\n"


async def test_nothing_is_chosen_and_ctrl_s_asks_a_one_line_confirmation(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id)
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter")
        form = app.screen
        assert isinstance(form, DecideDialog)
        assert form.decision is None
        assert form.focused is form.query_one("#decision", RadioSet)
        assert [str(b.label) for b in form.query("#decision RadioButton").results(RadioButton)] == [
            "a approved",
            "x rejected",
            "f failed",
        ]
        await press(pilot, "ctrl+s")
        assert shown(app, "#problem") == "Not sent; fix these first:\ndecision: choose one"
        await press(pilot, "a", "ctrl+s")
        assert shown(app, "#confirm") == f"Approve approve on {run_id[:6]}… (screening)? y/n"
        await press(pilot, "n")
        assert not form.query_one("#confirm").display
        assert (await run_view(client, run_id))["run"]["state"] == "waiting"
        # A reject goes to its note, and asks too.
        await press(pilot, "x")
        assert form.focused is form.query_one("#note")
        type_into(app, "#note", "Spend not justified.\nAsk for the quote.")
        await press(pilot, "ctrl+s")
        assert shown(app, "#confirm") == f"Reject approve on {run_id[:6]}… (screening)? y/n"
        await press(pilot, "y")
        assert not isinstance(app.screen, DecideDialog)
        approve = (await run_view(client, run_id))["data"]["steps"]["approve"]
        assert (approve["decision"], approve["note"]) == (
            "rejected",
            "Spend not justified.\nAsk for the quote.",
        )
        assert app.toasts[0] == f"rejected approve: {run_id[:6]}… now active at check_vendor"


async def test_the_setting_turns_the_confirmation_off_for_approvals_only(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    first = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(first)
    app = make_app(client, clock, config=ConsoleConfig(confirm_approvals=False))
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter", "x")
        type_into(app, "#note", "No.")
        await press(pilot, "ctrl+s")
        assert shown(app, "#confirm").startswith("Reject approve on")
        await press(pilot, "n", "a", "ctrl+s")
        assert not isinstance(app.screen, DecideDialog)
        view = await run_view(client, first)
        assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "onboarded")


async def test_below_120_columns_the_halves_stack_context_above(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id)
    for size, narrow in (((100, 40), True), ((160, 48), False)):
        app = make_app(client, clock)
        async with app.run_test(size=size) as pilot:
            await app.ready.wait()
            await press(pilot, "enter")
            form = app.screen
            assert isinstance(form, DecideDialog)
            context = form.query_one("#decide-context").region
            body = form.query_one("#decide-body").region
            assert form.has_class("-narrow") is narrow
            if narrow:
                assert (context.x, context.bottom <= body.y) == (body.x, True)
            else:
                assert (context.y, context.right <= body.x) == (body.y, True)


async def test_d_in_run_detail_asks_which_item_when_there_are_several(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("review-pair", {"contract": "C-1"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        app.open_run(run_id)
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)
        app.screen.query_one("#run-tabs", TabbedContent).active = "run-evidence"
        await settle(pilot)
        await press(pilot, "d")
        chooser = app.screen
        assert isinstance(chooser, ChoiceDialog)
        assert chooser.dialog_title == f"Decide which item of run {run_id}?"
        assert [label for label, _ in chooser.choices] == [
            "task · legal · Review the legal terms.",
            "task · finance · Review the price.",
        ]
        chooser.query_one("#choices", OptionList).highlighted = 1
        await press(pilot, "enter")
        assert isinstance(app.screen, DecideDialog)
        assert app.screen.item["stepId"] == "finance"


async def test_after_a_decision_the_cursor_moves_to_the_next_item(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    runs = []
    for name in ("A", "B", "C"):
        runs.append(await agent.start("screening", {"vendorName": name}))
        await agent.screen(runs[-1])
        clock.advance(minutes=1)
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        work = app.main.work
        keys = list(work.table.keys)
        work.table.move_cursor(row=1)
        await press(pilot, "enter", "a", "ctrl+s", "y")
        assert work.table.keys == [keys[0], keys[2]]
        assert work.table.current_key == keys[2]
        decided = keys[1].split("/")[0]
        assert app.toasts[0] == f"approved approve: {decided[:6]}… now ended: onboarded"


async def test_decision_keys_work_on_the_decision_row_only_and_switching_keeps_the_note(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    """A person who tabs out of the note and keeps typing does not switch the decision; back on the
    decision row the keys switch it, and what was typed in the note stays through every switch."""
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id)
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter", "x")
        form = app.screen
        assert isinstance(form, DecideDialog)
        assert form.focused is form.query_one("#note")
        type_into(app, "#note", "Spend not justified.")
        await press(pilot, "tab")
        assert form.focused is form.query_one("#submit")
        await press(pilot, "a", "c", "f", "b")
        assert (form.decision, form.focused) == ("rejected", form.query_one("#submit"))
        assert form.query_one("#note", TextArea).text == "Spend not justified."
        await press(pilot, "shift+tab", "shift+tab")
        assert form.focused is form.query_one("#decision", RadioSet)
        for key, decision in (("f", "failed"), ("a", "approved"), ("x", "rejected")):
            await press(pilot, key)
            assert (form.decision, form.focused) == (decision, form.query_one("#decision", RadioSet))
            assert form.query_one("#note", TextArea).text == "Spend not justified."
        await press(pilot, "ctrl+s", "y")
        approve = (await run_view(client, run_id))["data"]["steps"]["approve"]
        assert (approve["decision"], approve["note"]) == ("rejected", "Spend not justified.")


def test_inputs_show_objects_as_pairs_and_lists_of_objects_one_row_each() -> None:
    inputs: dict[str, object] = {
        "vendor": "Globex",
        "amount": 12.5,
        "address": {"city": "Lyon", "zip": "69001"},
        "lineItems": [{"description": "Desk", "quantity": 2}, {"description": "Lamp", "quantity": 1}],
        "tags": ["a", "b"],
        "empty": [],
    }
    assert input_table(inputs, Palette()) == [
        ("  vendor     Globex", ""),
        ("  amount     12.5", ""),
        ("  address    city: Lyon · zip: 69001", ""),
        ("  lineItems  2 items", ""),
        ("             1. description: Desk · quantity: 2", ""),
        ("             2. description: Lamp · quantity: 1", ""),
        ('  tags       ["a", "b"]', ""),
        ("  empty      []", ""),
    ]
    assert input_table({}, Palette()) == [("  (no inputs)", Palette().muted)]
