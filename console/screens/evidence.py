"""Every evidence item of a run: which step, the file's name and size, its hash, and whether the bytes
served today still hash to what was recorded at upload (spec §5). Links are listed as stated.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from console.actions import bindings
from console.client.envelope import failure
from console.client.files import FetchedFile
from console.format import plain
from console.modals.common import AnswerDialog, PathDialog, TextDialog
from console.palette import Palette
from console.scoped import Scoped
from console.widgets.live_table import Column, LiveTable

COLUMNS = (
    Column("step", "Step", 14),
    Column("kind", "Kind", 4),
    Column("name", "Name / link", 20),
    Column("match", "Match", 9),
    Column("bytes", "Bytes", 8),
    Column("sha256", "SHA-256", 16),
    Column("attempt", "Attempt", 8),
    Column("ref", "Ref", 24),
)
MAX_VIEW_BYTES = 1024 * 1024


@dataclass(frozen=True)
class EvidenceRow:
    key: str
    step: str
    attempt: str
    item: dict[str, Any]


@dataclass(frozen=True)
class Checked:
    """A file read back: what was served, and whether it matches the hash in run data."""

    name: str | None
    size: int
    sha256: str
    matches: bool
    content: bytes


def evidence_rows(view: dict[str, Any]) -> list[EvidenceRow]:
    """Current and earlier attempts of every step, plus a candidate held for a person."""
    rows: list[EvidenceRow] = []
    steps = (view.get("data") or {}).get("steps") or {}
    for step_id, data in steps.items():
        history = data.get("history") or []
        for number, entry in enumerate(history, 1):
            for index, item in enumerate(entry.get("evidence") or ()):
                rows.append(EvidenceRow(f"{step_id}/h{number}/{index}", step_id, f"#{number}", item))
        for index, item in enumerate(data.get("evidence") or ()):
            rows.append(EvidenceRow(f"{step_id}/c/{index}", step_id, "current", item))
    for work_item in view.get("workItems") or ():
        candidate = (work_item.get("escalation") or {}).get("candidate") or {}
        for index, item in enumerate(candidate.get("evidence") or ()):
            rows.append(EvidenceRow(f"{work_item['stepId']}/held/{index}", work_item["stepId"], "held", item))
    return rows


def check_file(item: dict[str, Any], fetched: FetchedFile) -> Checked:
    digest = hashlib.sha256(fetched.content).hexdigest()
    return Checked(
        fetched.file_name, len(fetched.content), digest, digest == item.get("sha256"), fetched.content
    )


class EvidencePane(Scoped, Vertical):
    SCOPE = "evidence"
    BINDINGS = bindings("evidence")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: dict[str, EvidenceRow] = {}
        self.checked: dict[str, Checked | str] = {}
        """By `ref:sha256` (files never change): what was served, or why it could not be read."""

    def compose(self) -> ComposeResult:
        yield LiveTable(COLUMNS, id="evidence-table")
        yield Static("", id="evidence-status", classes="status-line")

    @property
    def table(self) -> LiveTable:
        return self.query_one("#evidence-table", LiveTable)

    def action_ready(self, action: str) -> bool:
        row = self.selected()
        if row is None:
            return False
        if action in ("view_file", "save_file"):
            return isinstance(self.checked.get(_cache_key(row.item)), Checked)
        return True

    def selected(self) -> EvidenceRow | None:
        key = self.table.current_key
        return None if key is None else self.rows.get(key)

    def show(self, view: dict[str, Any], palette: Palette) -> None:
        rows = evidence_rows(view)
        self.rows = {row.key: row for row in rows}
        self.table.sync([(row.key, self._cells(row, palette)) for row in rows])
        files = sum(1 for row in rows if row.item.get("kind") == "file")
        self.query_one("#evidence-status", Static).update(
            Text(f"{len(rows)} items, {files} files · v view · S save · c copy URL", style="dim")
        )
        pending = [
            row for row in rows if row.item.get("kind") == "file" and _cache_key(row.item) not in self.checked
        ]
        if pending:
            self.verify(pending)
        self.sync_bindings()

    def _cells(self, row: EvidenceRow, palette: Palette) -> list[Text]:
        item = row.item
        sha = str(item.get("sha256") or "")
        if item.get("kind") != "file":
            name, size, match = plain(item.get("ref")), plain(""), plain("link", palette.muted)
        else:
            checked = self.checked.get(_cache_key(item))
            if isinstance(checked, Checked):
                name = plain(checked.name or "")
                size = plain(checked.size)
                match = (
                    plain("✓ match", palette.success)
                    if checked.matches
                    else plain("✗ CHANGED", palette.error)
                )
            else:
                name, size = plain(""), plain("")
                match = (
                    plain("checking…", palette.muted)
                    if checked is None
                    else plain("✗ " + checked, palette.error)
                )
        return [
            plain(row.step),
            plain(item.get("kind")),
            name,
            match,
            size,
            plain(sha[:16]),
            plain(row.attempt),
            plain(item.get("ref")),
        ]

    @work(group="evidence-verify", exclusive=True)
    async def verify(self, rows: list[EvidenceRow]) -> None:
        for row in rows:
            url = row.item.get("url")
            if not url:
                self.checked[_cache_key(row.item)] = "no URL"
                continue
            fetched = await self.apc.client.fetch_file(str(url))
            if isinstance(fetched, FetchedFile):
                self.checked[_cache_key(row.item)] = check_file(row.item, fetched)
            else:
                self.checked[_cache_key(row.item)] = "unreadable"
        palette = self.apc.palette
        self.table.sync([(row.key, self._cells(row, palette)) for row in self.rows.values()])
        self.sync_bindings()

    @on(DataTable.RowHighlighted, "#evidence-table")
    def _highlighted(self) -> None:
        self.sync_bindings()

    @on(DataTable.RowSelected, "#evidence-table")
    async def _selected(self) -> None:
        await self.run_action("view_file")

    def _checked(self) -> tuple[EvidenceRow, Checked] | None:
        row = self.selected()
        if row is None:
            return None
        checked = self.checked.get(_cache_key(row.item))
        return (row, checked) if isinstance(checked, Checked) else None

    def action_view_file(self) -> None:
        found = self._checked()
        if found is None:
            return
        row, checked = found
        title = f"{checked.name or row.item.get('ref')} · {row.step} · {checked.size} bytes"
        if checked.size > MAX_VIEW_BYTES:
            self.apc.toast("This file is too large to view here; save it instead.", severity="warning")
            return
        try:
            text = checked.content.decode("utf-8")
        except UnicodeDecodeError:
            self.apc.toast("This file is not text; save it to open it elsewhere.", severity="warning")
            return
        self.app.push_screen(TextDialog(title, text))

    def action_save_file(self) -> None:
        found = self._checked()
        if found is None:
            return
        row, checked = found
        default = str(Path.cwd() / (checked.name or str(row.item.get("ref"))))

        def save(path: str | None) -> None:
            if path is None:
                return
            target = Path(path).expanduser()
            try:
                target.write_bytes(checked.content)
            except OSError as exc:
                self.app.push_screen(
                    AnswerDialog("Save failed", failure("invalid", f"could not write {target}: {exc}"))
                )
                return
            self.apc.toast(f"Saved {checked.size} bytes to {target}")

        self.app.push_screen(PathDialog(f"Save {checked.name or row.item.get('ref')} to", default), save)

    def action_copy_url(self) -> None:
        row = self.selected()
        if row is None:
            return
        value = str(row.item.get("url") or row.item.get("ref"))
        self.app.copy_to_clipboard(value)
        self.apc.toast(f"Copied: {value}")


def _cache_key(item: dict[str, Any]) -> str:
    return f"{item.get('ref')}:{item.get('sha256')}"
