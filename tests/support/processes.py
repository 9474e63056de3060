"""Process folders written for a test: one `PROCESS.md` each, in a folder named after the process."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_process(root: Path, text: str) -> Path:
    """`text` (indented as it sits in the test) as `<root>/<name>/PROCESS.md`; the folder is returned."""
    text = textwrap.dedent(text).lstrip("\n")
    name = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:"))
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PROCESS.md").write_text(text)
    return folder
