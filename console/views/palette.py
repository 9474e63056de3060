"""Rich styles for the roles the console colours (late, failed, current, test ...), from the theme.

Cells are `rich.text.Text`, which cannot read Textual's `$variables`, so the active theme's colours
are resolved once into plain style strings and handed to whatever builds cells.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.color import Color, ColorParseError
from textual.theme import Theme


@dataclass(frozen=True)
class Palette:
    warning: str = "bold yellow"
    error: str = "bold red"
    success: str = "green"
    accent: str = "bold cyan"
    current: str = "bold reverse cyan"
    test: str = "bold magenta"
    muted: str = "dim"
    lane: str = "bold"

    @classmethod
    def from_theme(cls, theme: Theme) -> Palette:
        def colour(value: str | None, fallback: str) -> str:
            if value is None:
                return fallback
            try:
                Color.parse(value)
            except ColorParseError:
                return fallback
            return value

        return cls(
            warning=f"bold {colour(theme.warning, 'yellow')}",
            error=f"bold {colour(theme.error, 'red')}",
            success=colour(theme.success, "green"),
            accent=f"bold {colour(theme.accent, 'cyan')}",
            current=f"bold reverse {colour(theme.primary, 'blue')}",
            test=f"bold {colour(theme.secondary, 'magenta')}",
        )

    def role(self, name: str) -> str:
        """The style of a map role: `current`, `done`, `failed`, `cancelled`, `reject`, `label` ..."""
        return {
            "current": self.current,
            "done": self.success,
            "failed": self.error,
            "cancelled": self.muted,
            "reject": self.warning,
            "label": self.accent,
            "lane": self.lane,
            "marker": self.accent,
            "edge": "",
            "node": "",
        }.get(name, "")
