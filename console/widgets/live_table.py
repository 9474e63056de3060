"""A data table that follows live data by row key: only changed cells are rewritten.

Clearing and refilling on every refresh makes a table flicker, loses the cursor and costs a full
re-render; instead `sync` removes rows that went away, updates cells whose content changed, adds new
rows, and reorders only when the order changed. Columns have fixed widths so nothing jumps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from console.keys.registry import bindings
from console.views.format import SortText


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int
    """Its width when nothing says what its content needs (and always, in a `LiveTable`)."""
    least: int | None = None
    """How narrow it may be squeezed when room is short (None: never below what it needs)."""
    most: int | None = None
    """How wide its content may make it."""
    grow: bool = False
    """It takes the room the others leave (at least `least`)."""
    drop: int = 0
    """When room is short, columns with a `drop` go, 1 first (0: never); the detail still shows it."""


@dataclass(frozen=True)
class SyncResult:
    added: int
    removed: int
    changed: int
    """Cells rewritten."""


class StopRequested(Message):
    """`esc` in a table: stop a long load or bulk action where it stands (the app knows which runs)."""


STOPPABLE = ("load-all", "cancel")
"""Worker groups `esc` in a table stops."""


def _same(before: Text, after: Text) -> bool:
    """Rich compares text and spans only; a cell that turned late keeps its text but not its style."""
    return before is after or (before == after and before.style == after.style)


def _keyed(cell: Text, key: str) -> SortText:
    """The first cell remembers its row key, which is how rows are put back in a given order."""
    first = cell if isinstance(cell, SortText) else SortText(cell.plain, str(cell.style))
    first.row_key = key
    return first


class LiveTable(DataTable[Text]):
    SCOPE = "table"
    BINDINGS: ClassVar[list[BindingType]] = [
        b for b in bindings("table") if not (isinstance(b, Binding) and b.id == "table.stop")
    ]
    """A short list held whole has nothing to stop loading: `esc` is left to the screen."""

    def __init__(self, columns: Sequence[Column], *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.columns_spec = tuple(columns)
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._order: list[str] = []
        for column in self.columns_spec:
            self.add_column(Text(column.label), width=column.width, key=column.key)

    @property
    def keys(self) -> list[str]:
        """Row keys in display order."""
        return list(self._order)

    @property
    def current_key(self) -> str | None:
        if not self._order or not 0 <= self.cursor_row < len(self._order):
            return None
        return self._order[self.cursor_row]

    def row_cells(self, key: str) -> tuple[Text, ...] | None:
        return self._cells.get(key)

    def sync(self, rows: Sequence[tuple[str, Sequence[Text]]]) -> SyncResult:
        """Make the table show exactly `rows`, in that order, touching only what differs."""
        keep = self.current_key
        wanted = {key: tuple(cells) for key, cells in rows}
        removed = [key for key in self._cells if key not in wanted]
        for key in removed:
            self.remove_row(key)
            del self._cells[key]
        added = changed = 0
        for key, cells in wanted.items():
            cells = (_keyed(cells[0], key), *cells[1:])
            old = self._cells.get(key)
            self._cells[key] = cells
            if old is None:
                self.add_row(*cells, key=key, height=1)
                added += 1
                continue
            for column, before, after in zip(self.columns_spec, old, cells, strict=True):
                if not _same(before, after):
                    self.update_cell(key, column.key, after)
                    changed += 1
        order = [key for key, _ in rows]
        if order != self._order:
            self._order = order
            position = {key: index for index, key in enumerate(order)}
            self.sort(self.columns_spec[0].key, key=lambda cell: position[cell.row_key])
        if keep is not None and keep in wanted and self.cursor_row != self._order.index(keep):
            self.move_cursor(row=self._order.index(keep), animate=False, scroll=False)
        return SyncResult(added, len(removed), changed)
