"""An evidence file the operator opens: a text file in a viewer, any file saved to a path they name,
a URL or link copied."""

from __future__ import annotations

from pathlib import Path

from console.client import failure
from console.flows.shell import Shell
from console.modals.common import AnswerDialog, PathDialog, TextDialog


def view_text(shell: Shell, title: str, text: str) -> None:
    shell.push_screen(TextDialog(title, text))


def save_file(shell: Shell, name: str, content: bytes) -> None:
    def save(path: str | None) -> None:
        if path is None:
            return
        target = Path(path).expanduser()
        try:
            target.write_bytes(content)
        except OSError as exc:
            shell.push_screen(
                AnswerDialog("Save failed", failure("invalid", f"could not write {target}: {exc}"))
            )
            return
        shell.toast(f"Saved {len(content)} bytes to {target}")

    shell.push_screen(PathDialog(f"Save {name} to", str(Path.cwd() / name)), save)


def copy(shell: Shell, text: str) -> None:
    shell.copy_to_clipboard(text)
    shell.toast(f"Copied: {text}")
