"""Colour themes as TOML files in `themes/` (shipped with the package): one file per theme, loaded at
start, picked at run time."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from textual.theme import Theme

from console.resources import bundled

THEMES_DIR = bundled("themes")
DEFAULT_THEME = "harbor"
_COLOURS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


@dataclass(frozen=True)
class LoadedThemes:
    themes: list[Theme]
    problems: list[str]
    """One line per file that could not be used: the console starts anyway, without that theme."""


def theme_from_table(table: dict[str, object], source: str) -> Theme:
    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{source}: name: required")
    if not isinstance(table.get("primary"), str):
        raise ValueError(f"{source}: primary: required, a colour")
    unknown = sorted(set(table) - {"name", "dark", "variables", *_COLOURS})
    if unknown:
        raise ValueError(f"{source}: {unknown[0]}: unknown key")
    colours = {key: str(table[key]) for key in _COLOURS if key in table}
    variables = table.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError(f"{source}: variables: expected a table")
    return Theme(
        name=name,
        primary=colours["primary"],
        secondary=colours.get("secondary"),
        accent=colours.get("accent"),
        warning=colours.get("warning"),
        error=colours.get("error"),
        success=colours.get("success"),
        foreground=colours.get("foreground"),
        background=colours.get("background"),
        surface=colours.get("surface"),
        panel=colours.get("panel"),
        boost=colours.get("boost"),
        dark=bool(table.get("dark", True)),
        variables={str(k): str(v) for k, v in variables.items()},
    )


def load_themes(folder: Path = THEMES_DIR) -> LoadedThemes:
    themes: list[Theme] = []
    problems: list[str] = []
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        try:
            themes.append(theme_from_table(table, path.name))
        except ValueError as exc:
            problems.append(str(exc))
    return LoadedThemes(themes, problems)
