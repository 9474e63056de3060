"""Publishing a folder of sample processes: shared by the embedded first start and the live demo."""

from __future__ import annotations

from pathlib import Path

from engine.core import Engine
from engine.document import load_path
from engine.document.model import Process


async def publish_samples(engine: Engine, folder: Path) -> tuple[dict[str, Process], dict[str, list[str]]]:
    """Publish every process folder with each role bound to the group of the same name.

    Returns the published processes by name, and the issues of each folder this server refused
    (for example one needing a profile it does not offer).
    """
    published: dict[str, Process] = {}
    refused: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.iterdir() if (p / "PROCESS.md").is_file()):
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
