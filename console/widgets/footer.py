"""The footer, recomposed once per frame however often the bindings change before it.

Textual's footer rebuilds every key after each change of the screen's bindings (focus moving, a pane
saying what it can do now); at start-up that is several rebuilds before the first frame, each a few
dozen widgets styled anew. Changes that come before the next refresh now make one rebuild.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    _recompose_pending = False

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
