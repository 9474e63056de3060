"""A focusable pane of text that scrolls with `j`/`k` as well as the arrows (the timeline)."""

from __future__ import annotations

from textual.containers import VerticalScroll

from console.keys.registry import bindings
from console.keys.scoped import Scoped


class ScrollPane(Scoped, VerticalScroll):
    SCOPE = "scroll"
    BINDINGS = bindings("scroll")

    DEFAULT_CSS = """
    ScrollPane { height: 1fr; }
    """
