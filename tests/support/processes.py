"""Process folders written for a test: one `PROCESS.md` each, in a folder named after the process."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

from engine.core import Engine


def write_process(root: Path, text: str) -> Path:
    """`text` (indented as it sits in the test) as `<root>/<name>/PROCESS.md`; the folder is returned."""
    text = textwrap.dedent(text).lstrip("\n")
    name = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:"))
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PROCESS.md").write_text(text)
    return folder


async def publish(engine: Engine, root: Path, text: str, bind: Mapping[str, str] | None = None) -> str:
    """Write `text` under `<root>/processes` and publish it, asserting it is accepted; its name is returned."""
    folder = write_process(root / "processes", text)
    result = await engine.publish(folder, dict(bind or {}))
    assert result.ok, result.issues
    return folder.name
