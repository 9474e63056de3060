"""Updating a text whose height follows its content without laying the whole screen out each time.

A `Static` of `height: auto` asks for a layout of the screen on every `update`, which costs as much
as a frame on the main screen. The layout is only needed when the new text takes another number of
lines at the width it has; otherwise the text is repainted where it stands.
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


def update_sized(widget: Static, content: VisualType) -> None:
    """Show `content` in `widget`, laying the screen out only when its height changes."""
    width, height = widget.content_region.width, widget.content_region.height
    widget.update(content, layout=False)
    if not width or widget.get_content_height(widget.size, widget.size, width) != height:
        widget.refresh(layout=True)
