"""The footer, recomposed once per frame however often the bindings change before it.

Textual's footer rebuilds every key after each change of the screen's bindings (focus moving, a pane
saying what it can do now); at start-up that is several rebuilds before the first frame, each a few
dozen widgets styled anew. Changes that come before the next refresh now make one rebuild.

Each key Textual's footer makes starts compact (its own default) and is then bound to the footer's
`compact`; both steps restyle the key, twice per key and rebuild. Bound keys made here start with
the footer's value and class, so binding them changes nothing and restyles nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey


class Footer(TextualFooter):
    _recompose_pending = False

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            self._start_as_footer(widget)
            yield widget

    def _start_as_footer(self, widget: Widget) -> None:
        """A key bound to the footer's `compact` (or the keys of a group) starts with its value, class
        and all (the command palette's key is not bound: it stays compact, as Textual leaves it)."""
        if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):
            widget.set_reactive(FooterKey.compact, self.compact)
            widget.set_class(self.compact, "-compact", update=False)
        children: Iterable[Widget] = widget._pending_children
        for child in children:
            self._start_as_footer(child)

    def bindings_changed(self, screen: Screen[object]) -> None:
        """As Textual's, but a rebuild already asked for and not begun takes this change too."""
        self._bindings_ready = True
        if not screen.app.app_focus or self._recompose_pending:
            return
        if self.is_attached and screen is self.screen:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_pending = False  # a change from here on asks for a rebuild of its own
        await self.recompose()
