"""The activity log: every notice of this session, newest first, each with its time and count."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from console.live.notices import Entry
from console.views.palette import Palette


def entry_text(entry: Entry, palette: Palette) -> Text:
    style = {"error": palette.error, "warning": palette.warning}.get(entry.severity, "")
    text = Text(end="")
    text.append(entry.at.strftime("%H:%M:%S "), palette.muted)
    text.append(entry.line, style)
    return text


class ActivityPane(VerticalScroll, can_focus=True):
    DEFAULT_CSS = "ActivityPane { padding: 0 1; } ActivityPane > Static { height: auto; }"

    def compose(self) -> ComposeResult:
        yield Static(Text("Nothing yet.", style="dim"), id="activity-text")

    def show(self, entries: Sequence[Entry], palette: Palette) -> None:
        text = Text("\n", end="").join(entry_text(e, palette) for e in reversed(entries))
        shown = self.query_one("#activity-text", Static)
        # while the log is not on screen, no layout of the screen: showing its tab lays it out
        shown.update(text if entries else Text("Nothing yet.", style="dim"), layout=self.is_on_screen)
