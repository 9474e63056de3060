"""A table that renders only the lines on screen (Textual's Line API), for lists that can grow large.

Rows are a plain list of keys; a row's cells come from `source(key)` when the row is drawn, so a
long table costs what its visible rows cost, at first render and on every refresh. A drawn line is
kept while the row's cell objects are the very ones drawn last time, so an unchanged row is never
rendered twice, and only the lines that show something else are repainted (a cursor move repaints
two lines, a refresh the rows whose cells changed), so Textual composes only those. The cursor
follows its row's key through any change of the list, and when rows are inserted above it the view
moves with it, so nothing jumps under the operator's eyes.

`source` returning None draws the row as a placeholder (its page is not loaded); `WindowChanged`
tells the owner which rows are on screen so it can load them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from console.keys.registry import bindings
from console.live.paging import Window
from console.widgets.columns import PADDING, fit_widths
from console.widgets.live_table import STOPPABLE, Column, StopRequested, SyncResult

Cells = Sequence[Text]
Source = Callable[[str], Cells | None]
PLACEHOLDER = "…"
STRIP_CACHE = 1024
"""Rendered lines kept: a few screens' worth, dropped wholesale when full."""


@dataclass(frozen=True)
class Look:
    """What one screen line shows: the row's key, stripe and cursor, and its cell objects (the
    header: the sort and widths); a line is repainted when what it would show differs."""

    key: str | None
    odd: bool = False
    cursor: bool = False
    cells: Cells | None = None
    header: tuple[object, ...] = ()

    def same(self, other: Look | None) -> bool:
        return (
            other is not None
            and (self.key, self.odd, self.cursor, self.header)
            == (other.key, other.odd, other.cursor, other.header)
            and _same_cells(self.cells, other.cells)
        )


@dataclass(frozen=True)
class LineStyles:
    """The table's styles for one paint: looked up once, not once per line."""

    base: Style
    header: Style
    even: Style
    odd: Style
    cursor: Style
    placeholder: Style


class TableMessage(Message):
    """What a virtual table tells its owner; `control` is the table, for `@on(..., "#id")`."""

    def __init__(self, table: VirtualTable) -> None:
        super().__init__()
        self.table = table

    @property
    def control(self) -> VirtualTable:
        return self.table


class VirtualTable(ScrollView, can_focus=True):
    SCOPE = "table"
    BINDINGS: ClassVar[list[BindingType]] = [
        ("up", "cursor_up"),
        ("down", "cursor_down"),
        ("pageup", "page_up"),
        ("pagedown", "page_down"),
        ("home", "scroll_top"),
        ("end", "scroll_bottom"),
        ("enter", "select_cursor"),
        *bindings("table"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "virtual-table--header",
        "virtual-table--even-row",
        "virtual-table--odd-row",
        "virtual-table--cursor",
        "virtual-table--placeholder",
    }
    DEFAULT_CSS = """
    VirtualTable {
        background: $surface;
        color: $foreground;
        height: 1fr;
        &:focus {
            background-tint: $foreground 5%;
            & > .virtual-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .virtual-table--header {
                background-tint: $foreground 5%;
            }
        }
        &:dark > .virtual-table--even-row {
            background: $surface-darken-1 40%;
        }
        & > .virtual-table--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .virtual-table--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .virtual-table--even-row {
            background: $surface-lighten-1 50%;
        }
        & > .virtual-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .virtual-table--placeholder {
            color: $text-muted;
        }
    }
    """

    class RowHighlighted(TableMessage):
        def __init__(self, table: VirtualTable, key: str | None) -> None:
            super().__init__(table)
            self.key = key

    class RowSelected(TableMessage):
        def __init__(self, table: VirtualTable, key: str) -> None:
            super().__init__(table)
            self.key = key

    class HeaderSelected(TableMessage):
        """A column header was clicked: the owner decides what sorting by it means."""

        def __init__(self, table: VirtualTable, column: str) -> None:
            super().__init__(table)
            self.column = column

    class WindowChanged(TableMessage):
        """Other rows are on screen now (scrolled, resized, or the list changed under them)."""

        def __init__(self, table: VirtualTable, window: Window) -> None:
            super().__init__(table)
            self.window = window

    class BottomRequested(TableMessage):
        """`G` on the last loaded row: the owner may load on."""

    def __init__(
        self,
        columns: Sequence[Column],
        *,
        source: Source | None = None,
        zebra_stripes: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.columns_spec = tuple(columns)
        self.zebra_stripes = zebra_stripes
        self._keys: list[str] = []
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._source: Source = source if source is not None else self._cells.get
        self._strips: dict[tuple[object, ...], tuple[Cells | None, Strip]] = {}
        self._segments: dict[tuple[object, ...], tuple[Cells | None, list[Segment]]] = {}
        self._drawn: dict[int, Look] = {}
        """Screen line to what it showed when last painted."""
        self._styles: LineStyles | None = None
        self._cursor = 0
        self._window = Window(0, -1)
        self._highlighted: str | None = None
        self.sorted_by: tuple[str, bool] | None = None
        """The column the rows are sorted by and whether descending, shown in its header; None: server order."""
        self.widths = [column.width for column in self.columns_spec]
        """Each column's width; 0: not shown (see `fit_columns`)."""
        self._wanted: dict[str, int] = {}
        self._update_size()

    # the model

    @property
    def keys(self) -> Sequence[str]:
        """Row keys in display order (not a copy: the table replaces the list, never changes it)."""
        return self._keys

    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def cursor_row(self) -> int:
        return self._cursor

    @property
    def current_key(self) -> str | None:
        return self._keys[self._cursor] if 0 <= self._cursor < len(self._keys) else None

    def key_at(self, row: int) -> str | None:
        return self._keys[row] if 0 <= row < len(self._keys) else None

    def row_cells(self, key: str) -> tuple[Text, ...] | None:
        cells = self._source(key)
        return None if cells is None else tuple(cells)

    def sync(self, rows: Sequence[tuple[str, Sequence[Text]]]) -> SyncResult:
        """Show exactly `rows` with the cells given (the table keeps them): for lists held whole."""
        before = self._cells
        fresh = {key: tuple(cells) for key, cells in rows}
        added = sum(1 for key in fresh if key not in before)
        removed = sum(1 for key in before if key not in fresh)
        changed = sum(
            1
            for key, cells in fresh.items()
            if (old := before.get(key)) is not None
            for a, b in zip(old, cells, strict=True)
            if not (a is b or (a == b and a.style == b.style))
        )
        self._cells.clear()
        self._cells.update(fresh)
        self.set_keys([key for key, _ in rows])
        return SyncResult(added, removed, changed)

    def set_keys(self, keys: Sequence[str]) -> None:
        """Show these rows in this order; the cursor stays on its key, and the view moves with it."""
        keep, row = self.current_key, self._cursor
        self._keys = list(keys)
        found = row if self.current_key == keep else self._index(keep)
        self._update_size()
        if found is not None:
            if found != row:
                self._cursor = found
                self.scroll_to(y=self.scroll_y + found - row, animate=False, immediate=True)
        else:
            self._cursor = max(0, min(row, len(self._keys) - 1))
        self.repaint_changed()
        self._after_move(scroll=False)

    def refresh_rows(self, keys: Iterable[str] | None = None) -> None:
        """Draw the visible rows again where their cells changed (asked of `source`, compared by identity)."""
        del keys  # every visible line re-checks its cells by identity, which is what makes this cheap
        self.repaint_changed()

    def repaint_changed(self) -> None:
        """Repaint the screen lines that would show something else than they show: only those are
        rendered and composed again."""
        height = self.scrollable_content_region.height
        changed = [y for y in range(height) if not self._look(y).same(self._drawn.get(y))]
        if len(changed) > height // 2:
            self.refresh()
            return
        width = self.scrollable_content_region.width
        for y in changed:
            self.refresh(Region(0, y, width, 1))

    def _look(self, y: int, cells: Cells | None = None) -> Look:
        """What screen line `y` shows now (`cells`: its row's cells when already asked for)."""
        if y == 0:
            return Look(None, header=("header", self.sorted_by, tuple(self.widths)))
        row = round(self.scroll_y) + y - 1
        if row >= len(self._keys):
            return Look(None)
        key = self._keys[row]
        found = self._source(key) if cells is None else cells
        return Look(key, bool(row % 2), row == self._cursor, found)

    def _index(self, key: str | None) -> int | None:
        if key is None:
            return None
        try:
            return self._keys.index(key)
        except ValueError:
            return None

    def _update_size(self) -> None:
        """The scrollable size: set without a layout of the screen (the table's own size does not
        depend on it), unless a scrollbar comes or goes."""
        size = Size(sum(w + 2 * PADDING for w in self.widths if w), len(self._keys) + 1)
        if size == self.virtual_size:
            return
        if not self.is_mounted:
            self.virtual_size = size
            return
        bars = (self.show_vertical_scrollbar, self.show_horizontal_scrollbar)
        self.set_reactive(VirtualTable.virtual_size, size)
        self._scroll_update(size)
        if (self.show_vertical_scrollbar, self.show_horizontal_scrollbar) != bars:
            self.refresh(layout=True)

    def fit_columns(self, wanted: Mapping[str, int] | None = None) -> None:
        """Share the width among the columns (`columns.fit_widths`), with what each one's content needs
        when `wanted` says; again on every resize. Room is kept for the vertical scrollbar."""
        if wanted is not None:
            self._wanted = dict(wanted)
        room = self.size.width - self.styles.scrollbar_size_vertical
        if room > 0:
            self.set_widths(fit_widths(self.columns_spec, room, self._wanted))

    def set_widths(self, widths: Sequence[int]) -> None:
        """New widths; the rows on screen are told again once laid out (a sideways scrollbar may go)."""
        if list(widths) != self.widths:
            self.widths = list(widths)
            self._strips.clear()
            self._segments.clear()
            self._update_size()
            self.refresh()
            self.call_after_refresh(self._announce_window)

    # the cursor

    @property
    def visible_rows(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def move_cursor(self, *, row: int, animate: bool = False, scroll: bool = True) -> None:
        del animate
        if not self._keys:
            return
        self._cursor = max(0, min(row, len(self._keys) - 1))
        self._after_move(scroll=scroll)
        self.repaint_changed()

    def _after_move(self, *, scroll: bool) -> None:
        if scroll:
            top = round(self.scroll_y)
            if self._cursor < top:
                self.scroll_to(y=self._cursor, animate=False, immediate=True)
            elif self._cursor >= top + self.visible_rows:
                self.scroll_to(y=self._cursor - self.visible_rows + 1, animate=False, immediate=True)
        key = self.current_key
        if key != self._highlighted:
            self._highlighted = key
            self.post_message(self.RowHighlighted(self, key))
        self._announce_window()

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self._cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_cursor(row=self._cursor - 1)

    def action_page_down(self) -> None:
        self.move_cursor(row=self._cursor + self.visible_rows)

    def action_page_up(self) -> None:
        self.move_cursor(row=self._cursor - self.visible_rows)

    def action_scroll_top(self) -> None:
        self.move_cursor(row=0)

    def action_scroll_bottom(self) -> None:
        at_end = self._cursor >= len(self._keys) - 1
        self.move_cursor(row=len(self._keys) - 1)
        if at_end or self._keys:
            self.post_message(self.BottomRequested(self))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`esc` is the table's only while something runs that it stops; else it goes to the screen."""
        if action == "stop_loading":
            return any(w.group in STOPPABLE and not w.is_finished for w in self.app.workers)
        return super().check_action(action, parameters)

    def action_stop_loading(self) -> None:
        self.post_message(StopRequested())

    def action_select_cursor(self) -> None:
        key = self.current_key
        if key is not None:
            self.post_message(self.RowSelected(self, key))

    # what is on screen

    @property
    def window(self) -> Window:
        top = round(self.scroll_y)
        return Window(top, min(len(self._keys), top + self.visible_rows) - 1)

    def _announce_window(self) -> None:
        window = self.window
        if window != self._window:
            self._window = window
            self.post_message(self.WindowChanged(self, window))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._announce_window()

    def watch_show_horizontal_scrollbar(self, shown: bool) -> None:
        """A sideways scrollbar that comes or goes takes or gives a row on screen."""
        self._announce_window()

    def on_resize(self, event: events.Resize) -> None:
        self.fit_columns()
        self._announce_window()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # mouse

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x + round(self.scroll_x))
            if column is not None:
                self.post_message(self.HeaderSelected(self, column))
            return
        row = round(self.scroll_y) + offset.y - 1
        if not 0 <= row < len(self._keys):
            return
        again = row == self._cursor
        self.move_cursor(row=row)
        if again or event.chain > 1:
            self.action_select_cursor()

    def _column_at(self, x: int) -> str | None:
        edge = 0
        for column, width in zip(self.columns_spec, self.widths, strict=True):
            if not width:
                continue
            edge += width + 2 * PADDING
            if x < edge:
                return column.key
        return None

    # rendering

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def render_lines(self, crop: Region) -> list[Strip]:
        self._styles = None  # looked up again for each paint: focus, theme or hover may have changed
        return super().render_lines(crop)

    @property
    def line_styles(self) -> LineStyles:
        if self._styles is None:
            self._styles = LineStyles(
                self.rich_style,
                self._style("virtual-table--header"),
                self._style("virtual-table--even-row"),
                self._style("virtual-table--odd-row"),
                self._style("virtual-table--cursor"),
                self._style("virtual-table--placeholder"),
            )
        return self._styles

    def _header_text(self) -> Text:
        line = Text(no_wrap=True, end="")
        for column, width in zip(self.columns_spec, self.widths, strict=True):
            if not width:
                continue
            label = column.label
            if self.sorted_by is not None and self.sorted_by[0] == column.key:
                label = f"{label}{'▼' if self.sorted_by[1] else '▲'}"
            piece = Text(label)
            piece.truncate(width, overflow="ellipsis", pad=True)
            line.append(" " * PADDING)
            line.append_text(piece)
            line.append(" " * PADDING)
        return line

    def _row_text(self, cells: Cells | None) -> Text:
        line = Text(no_wrap=True, end="")
        if cells is None:
            line.append(" " * PADDING + PLACEHOLDER, self.line_styles.placeholder)
            return line
        for cell, width in zip(cells, self.widths, strict=False):
            if not width:
                continue
            piece = cell.copy()
            piece.truncate(width, overflow="ellipsis", pad=True)
            line.append(" " * PADDING)
            line.append_text(piece)
            line.append(" " * PADDING)
        return line

    def _line(self, segments: list[Segment], style: Style, cursor: Style | None = None) -> Strip:
        """A line of rendered cells in the row's style; the cursor's colours win over a cell's own,
        as in DataTable."""
        width = max(self.virtual_size.width, self.scrollable_content_region.width)
        return Strip(list(Segment.apply_style(segments, style, cursor))).adjust_cell_length(width, style)

    def _rendered(self, key: str, cells: Cells | None) -> list[Segment]:
        """The row's cells rendered at the column widths, unstyled by the row: kept while the cells
        are the same objects, so a row that only changes stripe or cursor is not laid out again."""
        cache_key = (key, tuple(self.widths))
        cached = self._segments.get(cache_key)
        if cached is not None and _same_cells(cached[0], cells):
            return cached[1]
        segments = list(self._row_text(cells).render(self.app.console))
        if len(self._segments) >= STRIP_CACHE:
            self._segments.clear()
        self._segments[cache_key] = (cells, segments)
        return segments

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        scroll_x = round(self.scroll_x)
        styles = self.line_styles
        base = styles.base
        if y == 0:
            style = base + styles.header
            self._drawn[y] = self._look(0)
            cache_key: tuple[object, ...] = ("header", self.sorted_by, style, tuple(self.widths))
            cached = self._strips.get(cache_key)
            if cached is None:
                strip = self._line(list(self._header_text().render(self.app.console)), style)
            else:
                strip = cached[1]
            self._remember(cache_key, None, strip)
            return strip.crop(scroll_x, scroll_x + width)
        row = round(self.scroll_y) + y - 1
        if row >= len(self._keys):
            self._drawn[y] = Look(None)
            return Strip.blank(width, base)
        key = self._keys[row]
        cells = self._source(key)
        self._drawn[y] = self._look(y, cells)
        style = base
        if self.zebra_stripes:
            style += styles.odd if row % 2 else styles.even
        cursor = row == self._cursor
        if cursor:
            style += styles.cursor
        cache_key = (key, style, tuple(self.widths))
        cached = self._strips.get(cache_key)
        if cached is not None and _same_cells(cached[0], cells):
            strip = cached[1]
        else:
            strip = self._line(self._rendered(key, cells), style, styles.cursor if cursor else None)
            self._remember(cache_key, cells, strip)
        return strip.crop(scroll_x, scroll_x + width)

    def _remember(self, key: tuple[object, ...], cells: Cells | None, strip: Strip) -> None:
        if len(self._strips) >= STRIP_CACHE:
            self._strips.clear()
        self._strips[key] = (cells, strip)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._segments.clear()


def _same_cells(before: Cells | None, after: Cells | None) -> bool:
    if before is None or after is None:
        return before is after
    return len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True))
