"""The footer, recomposed once per frame however often the bindings change before it.

Textual's footer rebuilds every key after each change of the screen's bindings (focus moving, a pane
saying what it can do now); at start-up that is several rebuilds before the first frame, each a few
dozen widgets styled anew. Changes that come before the next refresh now make one rebuild.

A rebuild whose keys would be the ones shown already (a change of focus or of what a pane can do
that leaves the keys as they are) is skipped, and a screen can have the keys built before it is first
laid out (`show_keys`): Textual's footer shows none until the bindings first change, then builds them
after the next frame, laying out the screen again.

Each key Textual's footer makes starts compact (its own default) and is then bound to the footer's
`compact`; both steps restyle the key, twice per key and rebuild. Bound keys made here start with
the footer's value and class, so binding them changes nothing and restyles nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

Keys = list[tuple[Binding, bool, str]]


class Footer(TextualFooter):
    _recompose_pending = False
    _shown: Keys | None = None
    """The keys as last built: (binding, enabled, tooltip) for each binding shown."""

    def _keys(self) -> Keys:
        active = self.screen.active_bindings.values()
        return [(binding, enabled, tooltip) for (_, binding, enabled, tooltip) in active if binding.show]

    def compose(self) -> ComposeResult:
        self._shown = self._keys() if self._bindings_ready else None
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
        """The rebuild asked for, after the next refresh: by then the screen may have closed (a run
        detail left as its run was shown), and a footer no longer on a screen has no keys to show."""
        self._recompose_pending = False  # a change from here on asks for a rebuild of its own
        if not self.is_attached:
            return
        if self._shown is None or self._keys() != self._shown:
            await self.recompose()

    async def show_keys(self) -> None:
        """Build the keys for the bindings as they stand, now (from another widget's handler: the keys
        are bound to this footer's `compact` as if it composed them in its own)."""
        self._bindings_ready = True
        with self._context():
            await self._recompose_once()
