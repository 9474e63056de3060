"""The process map in a scrollable pane, coloured by role and scrolled to where the run is."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widgets import Static

from console.keys.registry import bindings
from console.keys.scoped import Scoped
from console.map.canvas import Span
from console.map.layout import MapDrawing
from console.views.palette import Palette


def drawing_text(drawing: MapDrawing, palette: Palette) -> Text:
    text = Text(no_wrap=True, overflow="crop", end="")
    spans: dict[int, list[Span]] = {}
    for span in drawing.spans:
        spans.setdefault(span.row, []).append(span)
    for row, line in enumerate(drawing.lines):
        start = len(text)
        text.append(line)
        for span in spans.get(row, ()):
            style = palette.role(span.role)
            if style and span.start < len(line):
                text.stylize(style, start + span.start, start + min(span.end, len(line)))
        if row < len(drawing.lines) - 1:
            text.append("\n")
    return text


class MapView(Scoped, ScrollableContainer):
    """Holds one drawing; `show` replaces it and brings the current position into view."""

    SCOPE = "scroll"
    BINDINGS = bindings("scroll")

    DEFAULT_CSS = """
    MapView { overflow-x: auto; overflow-y: auto; height: 1fr; }
    MapView > Static { width: auto; height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, can_focus=True)
        self._canvas = Static("", markup=False, expand=False)
        self.drawing: MapDrawing | None = None

    def compose(self) -> ComposeResult:
        yield self._canvas

    def show(self, drawing: MapDrawing | None, palette: Palette, note: str = "") -> None:
        self.drawing = drawing
        if drawing is None:
            self._canvas.update(Text(note or "No map for this process.", style="dim"))
            return
        text = drawing_text(drawing, palette)
        above = 0
        if note:
            text = Text.assemble(Text(note + "\n\n", style="dim"), text)
            above = note.count("\n") + 2
        self._canvas.update(text)
        if drawing.current:
            box = drawing.boxes[drawing.current[0]]
            y = max(box.y + above - 4, 0)
            self.call_after_refresh(self.scroll_to, max(box.x - 4, 0), y, animate=False)
