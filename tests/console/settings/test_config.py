"""The console's own settings file: remembered, and a bad one gives the defaults."""

from __future__ import annotations

from pathlib import Path

from console.settings.config import ConsoleConfig


def test_settings_are_remembered_and_a_bad_file_gives_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "apc" / "console.toml"
    assert ConsoleConfig.load(path) == ConsoleConfig(path=path)
    ConsoleConfig(theme='pa"per', refresh_seconds=5.0, path=path).save()
    assert ConsoleConfig.load(path) == ConsoleConfig(theme='pa"per', refresh_seconds=5.0, path=path)
    path.write_text("refresh_seconds = true\ntheme = 3\n")
    assert ConsoleConfig.load(path) == ConsoleConfig(path=path)
    path.write_text("refresh_seconds = 0.01\n")
    assert ConsoleConfig.load(path).refresh_seconds == 0.5
