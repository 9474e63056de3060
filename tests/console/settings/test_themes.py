"""Colour themes: the TOML files load (a broken one is reported, never fatal), `T` lists the
console's themes first with the current one marked, and Textual's palette keeps only the entries that
make sense here."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from console.client.local import LocalClient
from console.modals.common import ChoiceDialog
from console.settings.themes import load_themes
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


def test_three_themes_load_and_a_broken_file_is_reported_not_fatal(tmp_path: Path) -> None:
    assert sorted(t.name for t in load_themes().themes) == ["ember", "harbor", "paper"]
    (tmp_path / "good.toml").write_text('name = "mine"\nprimary = "#123456"\ndark = false\n')
    (tmp_path / "bad.toml").write_text('name = "x"\ncolour = "#fff"\nprimary = "#000000"\n')
    (tmp_path / "broken.toml").write_text("name = \n")
    loaded = load_themes(tmp_path)
    assert [(t.name, t.dark, t.primary) for t in loaded.themes] == [("mine", False, "#123456")]
    assert loaded.problems[0] == "bad.toml: colour: unknown key"
    assert loaded.problems[1].startswith("broken.toml: ")
