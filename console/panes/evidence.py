"""Every evidence item of a run: which step, the file's name and size, its hash, and whether the bytes
served today still hash to what was recorded at upload (spec §5). Links are listed as stated.

The pane is given the run view and, as the app reads each file back, what was served; it asks the
app to view, save or copy what is selected.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from console.client.files import FetchedFile
from console.client.wire import RecordedEvidence, RunView
from console.keys.registry import bindings
from console.keys.scoped import Permissions, Scoped
from console.messages import CopyRequested, Notice, SaveFileRequested, ViewTextRequested
from console.views.format import plain
from console.views.palette import Palette
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
READING = "evidence-verify"
"""The worker group reading files back; `esc` cancels it."""


def read_so_far(read: int, total: int | None) -> str:
    """`↓ 37%` of a file whose size the server announced, else `↓ 12.5 MB`."""
    if total:
        return f"↓ {read * 100 // total}%"
    return f"↓ {read / 1_000_000:.1f} MB"


@dataclass(frozen=True)
class EvidenceRow:
    key: str
    step: str
    attempt: str
    item: RecordedEvidence


@dataclass(frozen=True)
class Checked:
    """A file read back: what was served, and whether it matches the hash in run data."""

    name: str | None
    size: int
    sha256: str
    matches: bool
    content: bytes


FileCheck = Checked | str
"""What was served for a file, or why it could not be read."""


def evidence_rows(view: RunView) -> list[EvidenceRow]:
    """Current and earlier attempts of every step, plus a candidate held for a person."""
    rows: list[EvidenceRow] = []
    for step_id, data in view["data"]["steps"].items():
        for number, entry in enumerate(data["history"], 1):
            for index, item in enumerate(entry.get("evidence") or ()):
                rows.append(EvidenceRow(f"{step_id}/h{number}/{index}", step_id, f"#{number}", item))
        for index, item in enumerate(data.get("evidence") or ()):
            rows.append(EvidenceRow(f"{step_id}/c/{index}", step_id, "current", item))
    for work_item in view["workItems"]:
        escalation = work_item["escalation"]
        candidate = escalation.get("candidate") if escalation is not None else None
        for index, item in enumerate((candidate or {}).get("evidence") or ()):
            rows.append(EvidenceRow(f"{work_item['stepId']}/held/{index}", work_item["stepId"], "held", item))
    return rows


def check_file(item: RecordedEvidence, fetched: FetchedFile) -> Checked:
    digest = hashlib.sha256(fetched.content).hexdigest()
    return Checked(
        fetched.file_name, len(fetched.content), digest, digest == item.get("sha256"), fetched.content
    )


def file_key(item: RecordedEvidence) -> str:
    """Files never change, so what was served is kept by reference and hash."""
    return f"{item.get('ref')}:{item.get('sha256')}"


class EvidencePane(Scoped, Vertical):
    SCOPE = "evidence"
    BINDINGS = bindings("evidence")

    def __init__(self, permissions: Permissions, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.permissions = permissions
        self.palette = Palette()
        self.rows: dict[str, EvidenceRow] = {}
        self.checked: dict[str, FileCheck] = {}
        """By `file_key`: what was served, or why it could not be read."""
        self.reading: dict[str, tuple[int, int | None]] = {}
        """By `file_key`: the files being read back now, bytes read and the total announced."""
        self.reading_files = False
        """A worker is reading files back: a refresh leaves it to finish instead of starting over."""

    def compose(self) -> ComposeResult:
        yield LiveTable(COLUMNS, id="evidence-table")
        yield Static("", id="evidence-status", classes="status-line")

    @property
    def table(self) -> LiveTable:
        return self.query_one("#evidence-table", LiveTable)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_reading":
            return bool(self.reading)  # esc otherwise keeps its meaning further up (close the run)
        return super().check_action(action, parameters)

    def action_ready(self, action: str) -> bool:
        row = self.selected()
        if row is None:
            return False
        if action in ("view_file", "save_file"):
            return isinstance(self.checked.get(file_key(row.item)), Checked)
        return True

    def selected(self) -> EvidenceRow | None:
        key = self.table.current_key
        return None if key is None else self.rows.get(key)

    def show(self, view: RunView, palette: Palette) -> None:
        rows = evidence_rows(view)
        self.rows = {row.key: row for row in rows}
        self.palette = palette
        files = sum(1 for row in rows if row.item["kind"] == "file")
        self.query_one("#evidence-status", Static).update(
            Text(f"{len(rows)} items, {files} files · v view · S save · c copy URL", style="dim")
        )
        self.redraw()

    def unchecked(self) -> list[RecordedEvidence]:
        """The files shown that have not been read back yet."""
        found = {file_key(r.item): r.item for r in self.rows.values() if r.item["kind"] == "file"}
        return [item for key, item in found.items() if key not in self.checked]

    def record(self, item: RecordedEvidence, result: FileCheck) -> None:
        """What was served for one file (the app reads them back); `redraw` shows it."""
        self.reading.pop(file_key(item), None)
        self.checked[file_key(item)] = result

    def progress(self, item: RecordedEvidence, read: int, total: int | None) -> None:
        """How far reading one file back has come; shown at once (`esc` stops it)."""
        self.reading[file_key(item)] = (read, total)
        self.redraw()

    def action_stop_reading(self) -> None:
        """Stop reading files back: the one being read and those still waiting show as stopped."""
        self.workers.cancel_group(self, READING)
        for item in self.unchecked():
            self.checked[file_key(item)] = "stopped"
        self.reading.clear()
        self.redraw()

    def redraw(self) -> None:
        self.table.sync([(row.key, self._cells(row, self.palette)) for row in self.rows.values()])
        self.sync_bindings()

    def _cells(self, row: EvidenceRow, palette: Palette) -> list[Text]:
        item = row.item
        sha = str(item.get("sha256") or "")
        if item["kind"] != "file":
            name, size, match = plain(item["ref"]), plain(""), plain("link", palette.muted)
        else:
            checked = self.checked.get(file_key(item))
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
                reading = self.reading.get(file_key(item))
                if reading is not None:
                    match = plain(read_so_far(*reading), palette.muted)
                elif checked is None:
                    match = plain("checking…", palette.muted)
                else:
                    match = plain("✗ " + checked, palette.error)
        return [
            plain(row.step),
            plain(item["kind"]),
            name,
            match,
            size,
            plain(sha[:16]),
            plain(row.attempt),
            plain(item["ref"]),
        ]

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
        checked = self.checked.get(file_key(row.item))
        return (row, checked) if isinstance(checked, Checked) else None

    def action_view_file(self) -> None:
        found = self._checked()
        if found is None:
            return
        row, checked = found
        title = f"{checked.name or row.item['ref']} · {row.step} · {checked.size} bytes"
        if checked.size > MAX_VIEW_BYTES:
            self.post_message(
                Notice("This file is too large to view here; save it instead.", severity="warning")
            )
            return
        try:
            text = checked.content.decode("utf-8")
        except UnicodeDecodeError:
            self.post_message(
                Notice("This file is not text; save it to open it elsewhere.", severity="warning")
            )
            return
        self.post_message(ViewTextRequested(title, text))

    def action_save_file(self) -> None:
        found = self._checked()
        if found is not None:
            row, checked = found
            self.post_message(SaveFileRequested(checked.name or row.item["ref"], checked.content))

    def action_copy_url(self) -> None:
        row = self.selected()
        if row is not None:
            self.post_message(CopyRequested(row.item.get("url") or row.item["ref"]))
