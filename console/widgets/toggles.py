"""Toggles whose state is in the glyph, not only in its colour: `[x]`/`[ ]` and `(•)`/`( )` read the
same in monochrome and under NO_COLOR."""

from __future__ import annotations

from textual.content import Content
from textual.style import Style
from textual.widgets import Checkbox, RadioButton


def _glyph(on: bool, left: str, mark: str, right: str, style: Style) -> Content:
    return Content.assemble((f"{left}{mark if on else ' '}{right}", style))


class GlyphCheckbox(Checkbox):
    """A checkbox drawn `[x] label` when on and `[ ] label` when off."""

    @property
    def _button(self) -> Content:
        return _glyph(self.value, "[", "x", "]", self.get_visual_style("toggle--label"))


class GlyphRadioButton(RadioButton):
    """A radio button drawn `(•) label` when chosen and `( ) label` when not."""

    @property
    def _button(self) -> Content:
        return _glyph(self.value, "(", "•", ")", self.get_visual_style("toggle--label"))
