"""The runner's own test processes, shipped as package data (`conform/processes/<name>/PROCESS.md`).

The server's operator publishes them before a run (`apc conform --print-setup` writes them out with
an org config); every role is named `approver` and bound to the config's group. `conform-versions`
ships twice, its earlier text under `processes/earlier/`, published first so runs can pin a version.
The runner reads the files itself to know what `list_processes` and the run view must show.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from ruamel.yaml import YAML

PROCESS_FILE = "PROCESS.md"


@dataclass(frozen=True)
class Shipped:
    name: str
    text: str
    front: dict[str, Any]
    body: str
    """Everything after the closing `---` line, exactly as written (spec §6 rule 5)."""
    profile: str | None
    """`parallel-1` or `check-1` when the process needs that profile."""
    folder: str
    """The folder under `conform/processes/` (`conform-versions`, `earlier/conform-versions`)."""

    @property
    def roles(self) -> list[str]:
        return sorted(
            {s["person"] for s in self.front["steps"] if "person" in s and "." not in s["person"]}
            - {"initiator"}
        )


def _root() -> Traversable:
    return resources.files("conform") / "processes"


def _load(folder: str) -> Shipped:
    place = _root()
    for part in folder.split("/"):
        place = place / part
    text = (place / PROCESS_FILE).read_text(encoding="utf-8")
    lines = text.split("\n")
    closing = lines.index("---", 1)
    front = YAML(typ="safe", pure=True).load("\n".join(lines[1:closing]))
    body = "\n".join(lines[closing + 1 :])
    steps = front["steps"]
    profile = None
    if any("parallel" in s for s in steps):
        profile = "parallel-1"
    elif any("check" in s for s in steps):
        profile = "check-1"
    return Shipped(front["name"], text, front, body, profile, folder)


@cache
def shipped() -> dict[str, Shipped]:
    """The current text of every process, by name."""
    names = sorted(p.name for p in _root().iterdir() if p.is_dir() and p.name.startswith("conform-"))
    return {name: _load(name) for name in names}


@cache
def earlier() -> dict[str, Shipped]:
    """Processes published twice: the text of the version before the current one, by name."""
    folder = _root() / "earlier"
    return {p.name: _load(f"earlier/{p.name}") for p in folder.iterdir() if p.is_dir()}


def needed(profiles: list[str]) -> list[Shipped]:
    """The processes a server offering `profiles` must have published for a run."""
    return [p for p in shipped().values() if p.profile is None or p.profile in profiles]


def listed_item(process: Shipped, version: int) -> dict[str, Any]:
    """The `list_processes` item the server must show for `process` at `version` (tools.md)."""
    item: dict[str, Any] = {
        "name": process.name,
        "description": process.front["description"],
        "version": version,
        "inputs": process.front.get("inputs", {}),
    }
    if "requires" in process.front:
        item["requires"] = process.front["requires"]
    return item
