"""The folders `apc` ships with its code: the sample processes and the console themes.

Their sources are the repository's top-level `sample_processes/` and `themes/`; `console/bundled/`
links to them, so a wheel carries copies as package data of `console` and an editable install reads
the sources themselves. Either way they are found through `importlib.resources`, never relative to
the current directory or to a clone.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

Bundled = Literal["sample_processes", "themes"]


def bundled(name: Bundled) -> Path:
    """The shipped folder `name` on disk. It may be missing from a broken install: callers check."""
    folder = files("console").joinpath("bundled", name)
    if not isinstance(folder, Path):
        raise RuntimeError(f"apc must be installed as files on disk, not in an archive: {folder}")
    return folder
