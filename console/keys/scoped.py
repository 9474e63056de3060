"""The link between a widget and the action registry: its bindings, and which of them apply now."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from textual.dom import DOMNode

from console.client import Capabilities
from console.keys.registry import allowed, find, specs


@dataclass(frozen=True)
class Permissions:
    """What the connection lets the operator do, handed down from the app to every pane and screen."""

    read_only: bool = False
    capabilities: Capabilities = field(default_factory=Capabilities)


class Scoped:
    """Mixin for a widget, screen or app that handles one scope of the registry, listed before the
    Textual class so that its `check_action` is the one that answers. (Not a `DOMNode` itself: Textual
    inherits default CSS along the first `DOMNode` base only.)

    `check_action` hides write actions in read-only mode and admin actions on connections without the
    capability, as the `permissions` handed down say, so the footer, the palette and the keys all agree
    on what can be done.
    """

    SCOPE: ClassVar[str]
    permissions: Permissions = Permissions()
    _offered: tuple[bool | None, ...] | None = None

    if TYPE_CHECKING:

        def refresh_bindings(self) -> None:
            """The Textual class beside the mixin provides it."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        spec = find(self.SCOPE, action)
        if spec is None:
            return True
        permissions = self.permissions
        if not allowed(spec, read_only=permissions.read_only, capabilities=permissions.capabilities):
            return False
        return True if self.action_ready(action) else None

    def action_ready(self, action: str) -> bool:
        """Whether the action has something to act on now; when not, it shows greyed out."""
        return True

    def sync_bindings(self) -> None:
        """Refresh the footer only when what this scope offers changed: a footer refresh re-lays out
        the screen, which a large table makes costly on every live tick."""
        offered = tuple(self.check_action(spec.action, ()) for spec in specs(self.SCOPE))
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()


def scope_of(node: DOMNode) -> str | None:
    """The registry scope a node handles (a `Scoped` one, or a widget declaring `SCOPE` itself)."""
    scope = getattr(node, "SCOPE", None)
    return scope if isinstance(scope, str) else None
