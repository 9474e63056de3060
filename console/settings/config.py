"""The console's own settings (theme, refresh interval, whether approvals ask to confirm), remembered
in the user config folder."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

import platformdirs

APP_NAME = "apc"
DEFAULT_REFRESH_SECONDS = 2.0
MIN_REFRESH_SECONDS = 0.5


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME)) / "console.toml"


@dataclass(frozen=True)
class ConsoleConfig:
    theme: str | None = None
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS
    confirm_approvals: bool = True
    """False sends an approval on `ctrl+s` without the one-line confirmation; every other decision asks."""
    path: Path | None = None
    """Where it is saved; None keeps it in memory only (tests, demos)."""

    @classmethod
    def load(cls, path: Path) -> ConsoleConfig:
        """Settings from `path`; a missing or unreadable file gives the defaults, never an error."""
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return cls(path=path)
        theme = raw.get("theme")
        seconds = raw.get("refresh_seconds", DEFAULT_REFRESH_SECONDS)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            seconds = DEFAULT_REFRESH_SECONDS
        confirm = raw.get("confirm_approvals", True)
        return cls(
            theme=theme if isinstance(theme, str) else None,
            confirm_approvals=confirm if isinstance(confirm, bool) else True,
            refresh_seconds=max(float(seconds), MIN_REFRESH_SECONDS),
            path=path,
        )

    def with_theme(self, theme: str) -> ConsoleConfig:
        return replace(self, theme=theme)

    def save(self) -> None:
        if self.path is None:
            return
        lines = [f"refresh_seconds = {self.refresh_seconds}"]
        if not self.confirm_approvals:
            lines.append("confirm_approvals = false")
        if self.theme is not None:
            lines.insert(0, f"theme = {json.dumps(self.theme)}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
