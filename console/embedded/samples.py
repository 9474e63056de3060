"""The sample processes shipped with `apc`, and publishing them: shared by the embedded first start
and the live demo."""

from __future__ import annotations

from pathlib import Path

from console.resources import bundled
from engine.core import Engine
from engine.document import PROCESS_FILE, load_path
from engine.document.model import Process

SAMPLES = bundled("sample_processes")


def sample_folders(folder: Path = SAMPLES) -> list[Path]:
    """The process folders in `folder`, by name; none when the folder is missing (a broken install)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if (p / PROCESS_FILE).is_file())


def no_samples(folder: Path = SAMPLES) -> str:
    return (
        f"No sample processes found in {folder}: the installation looks incomplete, so none were published."
    )


async def publish_samples(engine: Engine, folder: Path) -> tuple[dict[str, Process], dict[str, list[str]]]:
    """Publish every process folder with each role bound to the group of the same name.

    Returns the published processes by name, and the issues of each folder this server refused
    (for example one needing a profile it does not offer).
    """
    published: dict[str, Process] = {}
    refused: dict[str, list[str]] = {}
    for path in sample_folders(folder):
        loaded = load_path(path)
        roles = loaded.process.roles if loaded.process is not None else ()
        result = await engine.publish(path, {role: role for role in roles})
        if result.ok and result.name is not None:
            pinned = await engine.catalog.get(result.name, result.version)
            assert pinned is not None
            published[result.name] = pinned[1]
        else:
            refused[path.name] = list(result.issues)
    return published, refused
