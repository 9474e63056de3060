"""`T` lists the console's themes first with the current one marked; Textual's palette keeps only the
entries that make sense here. Budget: ~10 s."""

from __future__ import annotations

from textual.widgets import OptionList

from console.client.local import LocalClient
from console.modals.common import ChoiceDialog
from engine.clock import ManualClock
from tests.console.console_support import make_app, press


async def test_t_lists_our_themes_first_and_marks_the_current_one(
    client: LocalClient, clock: ManualClock
) -> None:
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await press(pilot, "T")
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        labels = [label for label, _ in dialog.choices]
        assert labels[:3] == ["  ember", "● harbor (current)", "  paper"]
        assert all(label.endswith("· Textual") for label in labels[3:])
        assert len(labels) > 3
        options = dialog.query_one("#choices", OptionList)
        options.highlighted = 2
        await press(pilot, "enter")
        assert app.theme == "paper"


async def test_the_palette_hides_textuals_maximize_and_second_theme_entry(
    client: LocalClient, clock: ManualClock
) -> None:
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Maximize" not in titles and "Theme" not in titles
        assert "Quit" in titles
