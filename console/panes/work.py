"""The work queue, the console's home: every open work item assigned to the caller, live.

The queue is a `PagedList` read page by page as the view needs it, in the server's order (oldest
first, which is "by age"); only the rows on screen are drawn. The process filter is the server's;
the text, kind and overdue filters and the sort by due apply to the rows loaded, and the status line
says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Checkbox, Input, Select, Static

from console.client.wire import PersonWorkEntry
from console.keys.registry import bindings
from console.keys.scoped import Permissions, Scoped
from console.live.lists import item_key
from console.live.paging import Change, KeptRows, PagedList, Window
from console.messages import DecideRequested, Notice, OpenRun, RefreshRequested, RowsWanted
from console.views.format import (
    Cell,
    SortText,
    TimedCell,
    age_cell,
    assignee,
    cell_text,
    due_cell,
    is_late,
    one_line,
    plain,
    short_id,
    sort_value,
    unique_prefix,
)
from console.views.palette import Palette
from console.views.render import to_text, work_item_lines
from console.widgets.columns import longest
from console.widgets.live_table import Column
from console.widgets.sized_text import update_sized
from console.widgets.toggles import GlyphCheckbox
from console.widgets.virtual_table import VirtualTable

COLUMNS = (
    Column("flags", "", 2),
    Column("kind", "Kind", 10),
    Column("process", "Process", 16, least=10, most=32),
    Column("run", "Run", 8),
    Column("step", "Step", 14, least=10, most=32),
    Column("age", "Age", 4, drop=2),
    Column("due", "Due", 9, least=7),
    Column("assigned", "Assigned", 16, least=10, most=24, drop=1),
    Column("text", "Text", 60, least=16, grow=True),
)
KINDS = ("approve", "task", "escalation")
KEPT_CELLS = 500
"""Rows whose cells are kept built; beyond four times that, cells of rows no longer kept are let go."""
SORTS = ("age", "due")


Clock = Callable[[], datetime]
"""The time now, as the connection's clock tells it (a demo's runs faster)."""


def item_kind(entry: PersonWorkEntry) -> str:
    item = entry["workItem"]
    return "escalation" if item["escalation"] else item["kind"]


def kind_label(entry: PersonWorkEntry) -> str:
    """The Kind column: an escalation an unsure check made is a `check`."""
    return "check" if checked_escalation(entry) else item_kind(entry)


def checked_escalation(entry: PersonWorkEntry) -> bool:
    """Escalated by an unsure check (a held candidate waits), not by an agent or a person asking."""
    escalation = entry["workItem"]["escalation"]
    return escalation is not None and escalation.get("check") is not None


def wants_rows(pages: PagedList[Any], window: Window) -> bool:
    """Whether rows on screen are not loaded, or the end of what is loaded is within a screen."""
    if not pages.started or window.last < window.first:
        return False
    near_end = window.last + (window.last - window.first + 1) >= len(pages.keys)
    return bool(pages.missing(window.first, window.last)) or (pages.more and near_end)


def window_text(first: int, last: int, total: int, more: bool) -> str:
    """`1–48 of ≥10,000`: the rows on screen and how many there are, as far as is known."""
    if total == 0:
        return "0 of 0" if not more else "0 of ≥0"
    return f"{first + 1:,}–{last + 1:,} of {'≥' if more else ''}{total:,}"


@dataclass(frozen=True)
class WorkFilter:
    process: str | None
    kind: str | None
    overdue: bool
    needle: str
    by_due: bool

    def admits(self, entry: PersonWorkEntry, now: datetime) -> bool:
        item = entry["workItem"]
        if self.process is not None and entry["process"] != self.process:
            return False
        if self.kind is not None and item_kind(entry) != self.kind:
            return False
        if self.overdue and not is_late(now, item.get("due")):
            return False
        if self.needle:
            haystack = " ".join(
                [
                    entry["process"],
                    entry["runId"],
                    item["stepId"],
                    item["text"],
                    assignee(item.get("assignedTo")),
                    item_kind(entry),
                    "check" if checked_escalation(entry) else "",
                ]
            ).lower()
            return self.needle in haystack
        return True

    @property
    def local(self) -> bool:
        """Whether a filter the server does not know is on: it applies to the loaded rows."""
        return self.kind is not None or self.overdue or bool(self.needle)


@dataclass(frozen=True)
class _ClockCell:
    """A cell that changes with time: what it shows, built from what, and until when it holds."""

    cell: Cell | None = None
    text: Text = field(default_factory=Text)
    until: float = float("-inf")

    def next(self, timed: TimedCell) -> _ClockCell:
        """The same Text object when the content did not change, so the table sees nothing to do."""
        cell, until = timed
        return _ClockCell(cell, self.text if cell == self.cell else cell_text(cell), until)


@dataclass
class _CachedRow:
    """A row as last shown: its entry, its fixed cells, and its two clock cells."""

    entry: PersonWorkEntry
    palette: Palette
    run_chars: int
    cells: tuple[Text, ...]
    since: str | None = None
    age: _ClockCell = field(default_factory=_ClockCell)
    due: _ClockCell = field(default_factory=_ClockCell)


def _static_cells(entry: PersonWorkEntry, palette: Palette, run_chars: int) -> tuple[Text, ...]:
    """Every cell that does not move with the clock: flags, kind, process, run (its first `run_chars`
    characters), step, assignee, text."""
    item = entry["workItem"]
    escalated, test = bool(item["escalation"]), entry["mode"] == "test"
    unsure = checked_escalation(entry)
    flag_style = palette.error if unsure else palette.warning if escalated else (palette.test if test else "")
    flag = "?" if unsure else "⚑" if escalated else " "
    return (
        SortText(flag + ("T" if test else " "), flag_style),
        plain(kind_label(entry), flag_style if escalated else ""),
        plain(entry["process"]),
        plain(short_id(entry["runId"], run_chars)),
        plain(item["stepId"]),
        plain(assignee(item.get("assignedTo"))),
        plain(one_line(reason if (reason := escalation_note(entry)) is not None else item.get("text"))),
    )


def escalation_note(entry: PersonWorkEntry) -> str | None:
    """Why an escalated item came to the caller (an unsure check's note names its open questions)."""
    escalation = entry["workItem"]["escalation"]
    return None if escalation is None else str(escalation.get("note") or "")


class WorkPane(Scoped, Vertical):
    SCOPE = "work"
    BINDINGS = bindings("work")

    def __init__(self, permissions: Permissions, clock: Clock, *, id: str | None = None) -> None:
        """`clock` tells the time when a filter changes between reads, to say what is overdue."""
        super().__init__(id=id)
        self.permissions = permissions
        self.clock = clock
        self.palette = Palette()
        self.pages: PagedList[PersonWorkEntry] = PagedList.whole([], item_key)
        self.entries = KeptRows(self.pages)
        self.updated: dict[str, str] = {}
        """Run id to the run's `updatedAt`: an item is as old as the last change to its run."""
        self.loaded = False
        self.last_read = datetime.fromtimestamp(0, UTC)
        """When the queue was last read: an item overdue now but not then is announced."""
        self._process_names: list[str] = []
        self._seen_processes: set[str] = set()
        """Processes of every item read: the process filter is the server's, so the rows read under
        one process filter must not take the others out of the choice."""
        self._rows: dict[str, _CachedRow] = {}
        self._now = datetime.fromtimestamp(0, UTC)
        self.server_process: str | None = None
        """The process filter the paged queue was read with (the server applied it)."""
        self.progress = ""
        """What a long load is doing, for the status line (empty when none runs)."""
        self.run_chars = unique_prefix(())
        """Characters of a run id shown: enough to tell apart every run loaded."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="filters"):
            yield Input(placeholder="/ filter", id="work-filter", compact=True)
            yield Select([], prompt="all processes", id="work-process", compact=True)
            yield Select([(Text(k), k) for k in KINDS], prompt="all kinds", id="work-kind", compact=True)
            yield GlyphCheckbox("overdue", id="work-overdue", compact=True)
            yield Select(
                [(Text(f"by {s}"), s) for s in SORTS],
                value="age",
                allow_blank=False,
                id="work-sort",
                compact=True,
            )
        yield VirtualTable(COLUMNS, source=self._cells, id="work-table")
        yield Static("", id="work-status", classes="status-line")
        with VerticalScroll(classes="detail", id="work-detail-box"):
            yield Static("", id="work-detail")

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#work-table", VirtualTable)

    def action_ready(self, action: str) -> bool:
        if action in ("decide", "open_run"):
            return self.table.current_key is not None
        return True

    # data

    def show(
        self,
        entries: list[PersonWorkEntry] | PagedList[PersonWorkEntry],
        updated: dict[str, str],
        now: datetime,
        palette: Palette,
        server_process: str | None = None,
    ) -> None:
        """Take a fresh read (a list read whole, or the paged queue); notices for what is new or newly
        overdue among the rows read, then redraw. `server_process`: the process filter the server applied.
        A read that ends after the console began to close is left alone."""
        if not self.is_attached:
            return
        pages = entries if isinstance(entries, PagedList) else self._whole(entries)
        changes = pages.take_changes()
        if self.loaded:
            self._announce(changes, now)
        self.pages = pages
        self.entries = KeptRows(pages)
        if any(is_new for *_, is_new in changes) or not self.loaded:
            self._measure()
        self.server_process = server_process
        self.updated = updated
        self.loaded = (
            pages.started
        )  # a list not read yet (a tab built before its first read) is measured again
        self.last_read = now
        self._seen_processes |= {e["process"] for e in pages.kept()}
        self._refresh_process_filter(sorted(self._seen_processes))
        self.redraw(now, palette)

    def _measure(self) -> None:
        """Fit the columns to what the loaded rows hold; run ids to a prefix unique among them."""
        entries = self.pages.kept()
        run_ids = {key.rpartition("/")[0] for key in self.pages.keys}
        self.run_chars = unique_prefix(run_ids)
        self.table.fit_columns(
            {
                "kind": longest(kind_label(e) for e in entries),
                "process": longest(e["process"] for e in entries),
                "run": longest(short_id(run_id, self.run_chars) for run_id in run_ids),
                "step": longest(e["workItem"]["stepId"] for e in entries),
                "assigned": longest(assignee(e["workItem"].get("assignedTo")) for e in entries),
            }
        )

    def _whole(self, entries: list[PersonWorkEntry]) -> PagedList[PersonWorkEntry]:
        """A list read whole updates the list shown, so what changed is known."""
        pages = self.pages if self.loaded else PagedList.whole([], item_key)
        pages.replace(entries)
        return pages

    def forget(self) -> None:
        """Start over for another identity: its queue is new to it, so nothing is announced as new."""
        self.pages = PagedList.whole([], item_key)
        self.entries = KeptRows(self.pages)
        self._seen_processes = set()
        self.loaded = False

    def _announce(self, changes: list[Change[PersonWorkEntry]], now: datetime) -> None:
        new = [after for _, after, is_new in changes if is_new]
        if len(new) == 1:
            e = new[0]
            self.post_message(
                Notice(
                    f"New work: {item_kind(e)} {e['workItem']['stepId']} · {e['process']} · {e['runId']}",
                    live=True,
                    group="new work items",
                )
            )
        elif new:
            self.post_message(
                Notice(f"{len(new)} new work items", live=True, group="new work items", count=len(new))
            )
        late = [
            after
            for before, after, _ in changes
            if before is not None
            and is_late(now, after["workItem"]["due"])
            and not is_late(self.last_read, before["workItem"]["due"])
        ]
        for e in late:
            self.post_message(
                Notice(
                    f"Overdue: {e['workItem']['stepId']} · {e['process']} · {e['runId']}",
                    severity="warning",
                    live=True,
                    group="items overdue",
                )
            )

    def _refresh_process_filter(self, names: list[str]) -> None:
        if names == self._process_names:
            return
        select = self.query_one("#work-process", Select)
        current = select.value
        self._process_names = names
        with select.prevent(Select.Changed):
            select.set_options([(Text(n), n) for n in names])
            if current in names:
                select.value = current

    def filters(self) -> WorkFilter:
        """The filter bar as it stands, read once per redraw."""
        process = self.query_one("#work-process", Select).value
        kind = self.query_one("#work-kind", Select).value
        return WorkFilter(
            process=None if process is Select.NULL else str(process),
            kind=None if kind is Select.NULL else str(kind),
            overdue=self.query_one("#work-overdue", Checkbox).value,
            needle=self.query_one("#work-filter", Input).value.strip().lower(),
            by_due=self.query_one("#work-sort", Select).value == "due",
        )

    def row(self, key: str, entry: PersonWorkEntry, now: datetime, palette: Palette) -> list[Text]:
        """The row's cells; cells whose content is unchanged are the very objects shown before."""
        cached = self._rows.get(key)
        if (
            cached is None
            or cached.entry != entry
            or cached.palette != palette
            or cached.run_chars != self.run_chars
        ):
            cached = _CachedRow(entry, palette, self.run_chars, _static_cells(entry, palette, self.run_chars))
            self._rows[key] = cached
        moment = now.timestamp()
        since = self.updated.get(entry["runId"])
        if since != cached.since or moment >= cached.age.until:
            cached.since = since
            cached.age = cached.age.next(age_cell(now, since))
        if moment >= cached.due.until:
            cached.due = cached.due.next(due_cell(now, entry["workItem"]["due"], palette.warning))
        flags, kind, process, run, step, assigned, text = cached.cells
        return [flags, kind, process, run, step, cached.age.text, cached.due.text, assigned, text]

    def redraw(self, now: datetime, palette: Palette) -> None:
        """Show the list: the server's order as it stands, or the loaded rows filtered and sorted here."""
        self.palette = palette
        self._now = now
        chosen = self.filters()
        if chosen.local or chosen.by_due or chosen.process != self.server_process:
            admitted = [(key, e) for key, e in self.entries.items() if chosen.admits(e, now)]
            if chosen.by_due:
                admitted.sort(key=lambda row: sort_value(self.row(row[0], row[1], now, palette)[6]))
            self.table.set_keys([key for key, _ in admitted])
        else:
            self.table.set_keys(self.pages.keys)
        self.table.sorted_by = ("due", False) if chosen.by_due else None
        self.table.refresh_rows()
        if len(self._rows) > 4 * KEPT_CELLS:
            self._rows = {key: row for key, row in self._rows.items() if self.pages.row(key) is not None}
        self._show_detail(palette)
        self.show_status()
        self.sync_bindings()

    def show_status(self) -> None:
        """Where the view is in the queue, what applies to loaded rows only, and a long load's progress."""
        chosen = self.filters()
        window = self.table.window
        parts = [window_text(window.first, window.last, self.table.row_count, self.pages.more)]
        if chosen.local and self.pages.more:
            parts.append(f"filter applies to the {len(self.pages.keys):,} loaded rows")
        if chosen.by_due and self.pages.more:
            parts.append("sorted by due among loaded rows")
        if self.progress:
            parts.append(self.progress)
        text = Text(" · ".join(parts), style="dim")
        status = self.query_one("#work-status", Static)
        shown = status.content
        if not isinstance(shown, Text) or shown.plain != text.plain:
            status.update(text, layout=False)  # one line: no layout of the screen

    def _cells(self, key: str) -> list[Text] | None:
        """A row's cells for the table, when its page is kept; None draws a placeholder."""
        entry = self.pages.row(key)
        return None if entry is None else self.row(key, entry, self._now, self.palette)

    def _show_detail(self, palette: Palette) -> None:
        """The selected item in full; left alone when unchanged, since an update re-lays the screen out."""
        key = self.table.current_key
        detail = self.query_one("#work-detail", Static)
        if key is None or key not in self.entries:
            text = Text("No work item selected." if self.entries else "No open work items.", style="dim")
        else:
            text = to_text(work_item_lines(self.entries[key]["workItem"], palette))
        shown = detail.content
        if not isinstance(shown, Text) or (shown.plain, shown.spans) != (text.plain, text.spans):
            update_sized(detail, text)

    def key_after(self, key: str) -> str | None:
        """The row below `key` (above it for the last row): where the cursor goes once `key` is decided."""
        keys = self.table.keys
        if key not in keys or len(keys) < 2:
            return None
        at = keys.index(key)
        return keys[at + 1] if at + 1 < len(keys) else keys[at - 1]

    def select(self, key: str) -> None:
        if key in self.table.keys:
            self.table.move_cursor(row=self.table.keys.index(key))

    def selected(self) -> PersonWorkEntry | None:
        key = self.table.current_key
        return None if key is None else self.entries.get(key)

    # events and actions

    @on(VirtualTable.RowHighlighted, "#work-table")
    def _highlighted(self) -> None:
        self._show_detail(self.palette)
        self.sync_bindings()

    @on(VirtualTable.RowSelected, "#work-table")
    async def _selected(self) -> None:
        """Enter (or a click) decides; read-only, where nothing is decided, it opens the item's run."""
        await self.run_action("open_run" if self.permissions.read_only else "decide")

    @on(VirtualTable.WindowChanged, "#work-table")
    def _scrolled(self, event: VirtualTable.WindowChanged) -> None:
        self.show_status()
        if wants_rows(self.pages, event.window):
            self.post_message(RowsWanted("work", event.window))

    @on(VirtualTable.BottomRequested, "#work-table")
    def _to_the_end(self) -> None:
        if self.pages.more:
            self.post_message(RowsWanted("work", Window(0, -1), to_end=True))

    @on(VirtualTable.HeaderSelected, "#work-table")
    def _sort_by_header(self, event: VirtualTable.HeaderSelected) -> None:
        if event.column in SORTS:
            self.query_one("#work-sort", Select).value = event.column

    @on(Input.Changed, "#work-filter")
    @on(Select.Changed)
    @on(Checkbox.Changed, "#work-overdue")
    def _filters_changed(self, event: Input.Changed | Select.Changed | Checkbox.Changed) -> None:
        """Typing filters as it goes; a choice made (a kind, a process, overdue, a sort) is applied, and
        the keys go back to the table, unless they are outside the pane (a select's first value, told
        as it mounts, can come once another tab is shown: it would pull its tab back)."""
        if self.loaded:
            self.redraw(self.clock(), self.palette)
        if not isinstance(event, Input.Changed) and self.has_focus_within:
            self.table.focus()
        if isinstance(event, Select.Changed) and event.select.id == "work-process":
            self.post_message(RefreshRequested())

    @on(Input.Submitted, "#work-filter")
    def _filter_done(self) -> None:
        self.table.focus()

    def action_filter(self) -> None:
        self.query_one("#work-filter", Input).focus()

    def _cycle(self, select_id: str, values: list[str]) -> None:
        select = self.query_one(select_id, Select)
        options: list[object] = [Select.NULL, *values]
        current = select.value
        select.value = (
            options[(options.index(current) + 1) % len(options)] if current in options else Select.NULL
        )

    def action_cycle_process(self) -> None:
        self._cycle("#work-process", list(self._process_names))

    def action_cycle_kind(self) -> None:
        self._cycle("#work-kind", list(KINDS))

    def action_toggle_overdue(self) -> None:
        self.query_one("#work-overdue", Checkbox).toggle()

    def action_cycle_sort(self) -> None:
        select = self.query_one("#work-sort", Select)
        select.value = SORTS[(SORTS.index(str(select.value)) + 1) % len(SORTS)]

    def action_decide(self) -> None:
        entry = self.selected()
        if entry is not None:
            self.post_message(DecideRequested(entry))

    def action_open_run(self) -> None:
        entry = self.selected()
        if entry is not None:
            self.post_message(OpenRun(entry["runId"]))
