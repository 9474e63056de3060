"""The link between a widget and the action registry: its bindings, and which of them apply now."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from console.actions import allowed, find, specs

if TYPE_CHECKING:
    from console.app import ApcApp


class Scoped:
    """Mixin for a widget, screen or app that handles one scope of the registry.

    `check_action` hides write actions in read-only mode and admin actions on connections without the
    capability, so the footer, the palette and the keys all agree on what can be done.
    """

    SCOPE: ClassVar[str]

    @property
    def apc(self) -> ApcApp:
        from console.app import ApcApp

        app = self.app  # type: ignore[attr-defined]
        assert isinstance(app, ApcApp)
        return app

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        spec = find(self.SCOPE, action)
        if spec is None:
            return True
        app = self.apc
        if not allowed(spec, read_only=app.read_only, capabilities=app.capabilities):
            return False
        return True if self.action_ready(action) else None

    def action_ready(self, action: str) -> bool:
        """Whether the action has something to act on now; when not, it shows greyed out."""
        return True

    def sync_bindings(self) -> None:
        """Refresh the footer only when what this scope offers changed: a footer refresh re-lays out
        the screen, which a large table makes costly on every live tick."""
        offered = tuple(self.check_action(spec.action, ()) for spec in specs(self.SCOPE))
        if offered != getattr(self, "_offered", None):
            self._offered = offered
            self.refresh_bindings()  # type: ignore[attr-defined]
