"""The runner is a client: nothing under conform/ imports the engine or the console, so it checks our
server exactly as it checks anyone else's (it reaches ours only as a subprocess, over MCP)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "conform"
FORBIDDEN = ("engine", "console")


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_conform_imports_nothing_from_the_engine_or_the_console() -> None:
    files = sorted(ROOT.rglob("*.py"))
    assert len(files) > 10
    found = [
        f"{path.relative_to(ROOT.parent)}: {name}"
        for path in files
        for name in _imports(path)
        if name.split(".")[0] in FORBIDDEN
    ]
    assert found == []


def test_the_walker_sees_every_kind_of_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import engine.core\nfrom console import cli\nfrom .x import y\nimport json\n")
    assert _imports(probe) == ["engine.core", "console", "json"]
