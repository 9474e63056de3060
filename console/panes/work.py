"""The work queue, the console's home: every open work item assigned to the caller, live.

Rows are keyed by run and work item, so a refresh only rewrites cells that changed. Filters (text,
process, kind, overdue) and the sort (age or due) are applied here, not by re-asking the server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Checkbox, DataTable, Input, Select, Static

from console.actions import bindings
from console.client.wire import PersonWorkEntry
from console.format import (
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
    sort_value,
)
from console.messages import DecideRequested, Notice, OpenRun
from console.palette import Palette
from console.render import to_text, work_item_lines
from console.scoped import Permissions, Scoped
from console.widgets.live_table import Column, LiveTable
from console.widgets.toggles import GlyphCheckbox

COLUMNS = (
    Column("flags", "", 2),
    Column("kind", "Kind", 10),
    Column("process", "Process", 16),
    Column("run", "Run", 10),
    Column("step", "Step", 14),
    Column("age", "Age", 4),
    Column("due", "Due", 9),
    Column("assigned", "Assigned", 16),
    Column("text", "Text", 60),
)
KINDS = ("approve", "task", "escalation")
SORTS = ("age", "due")


Clock = Callable[[], datetime]
"""The time now, as the connection's clock tells it (a demo's runs faster)."""


def item_key(entry: PersonWorkEntry) -> str:
    return f"{entry['runId']}/{entry['workItem']['id']}"


def item_kind(entry: PersonWorkEntry) -> str:
    item = entry["workItem"]
    return "escalation" if item["escalation"] else item["kind"]


def checked_escalation(entry: PersonWorkEntry) -> bool:
    """Escalated by an unsure check (a held candidate waits), not by an agent or a person asking."""
    escalation = entry["workItem"]["escalation"]
    return escalation is not None and escalation.get("check") is not None


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
    cells: tuple[Text, ...]
    since: str | None = None
    age: _ClockCell = field(default_factory=_ClockCell)
    due: _ClockCell = field(default_factory=_ClockCell)


def _static_cells(entry: PersonWorkEntry, palette: Palette) -> tuple[Text, ...]:
    """Every cell that does not move with the clock: flags, kind, process, run, step, assignee, text."""
    item = entry["workItem"]
    escalated, test = bool(item["escalation"]), entry["mode"] == "test"
    unsure = checked_escalation(entry)
    flag_style = palette.error if unsure else palette.warning if escalated else (palette.test if test else "")
    flag = "?" if unsure else "⚑" if escalated else " "
    return (
        SortText(flag + ("T" if test else " "), flag_style),
        plain("check" if unsure else item_kind(entry), flag_style if escalated else ""),
        plain(entry["process"]),
        plain(entry["runId"]),
        plain(item["stepId"]),
        plain(assignee(item.get("assignedTo"))),
        plain(one_line(item.get("text"))),
    )


class WorkPane(Scoped, Vertical):
    SCOPE = "work"
    BINDINGS = bindings("work")

    def __init__(self, permissions: Permissions, clock: Clock, *, id: str | None = None) -> None:
        """`clock` tells the time when a filter changes between reads, to say what is overdue."""
        super().__init__(id=id)
        self.permissions = permissions
        self.clock = clock
        self.palette = Palette()
        self.entries: dict[str, PersonWorkEntry] = {}
        self.updated: dict[str, str] = {}
        """Run id to the run's `updatedAt`: an item is as old as the last change to its run."""
        self.loaded = False
        self.last_read = datetime.fromtimestamp(0, UTC)
        """When the queue was last read: an item overdue now but not then is announced."""
        self._process_names: list[str] = []
        self._rows: dict[str, _CachedRow] = {}

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
        yield LiveTable(COLUMNS, id="work-table")
        with VerticalScroll(classes="detail", id="work-detail-box"):
            yield Static("", id="work-detail")

    @property
    def table(self) -> LiveTable:
        return self.query_one("#work-table", LiveTable)

    def action_ready(self, action: str) -> bool:
        if action in ("decide", "open_run"):
            return self.table.current_key is not None
        return True

    # data

    def show(
        self, entries: list[PersonWorkEntry], updated: dict[str, str], now: datetime, palette: Palette
    ) -> None:
        """Take a fresh read; notices for what is new or newly overdue, then redraw only what changed."""
        fresh = {item_key(e): e for e in entries}
        if self.loaded:
            self._announce(fresh, now)
        self.entries = fresh
        self.updated = updated
        self.loaded = True
        self.last_read = now
        self._refresh_process_filter()
        self.redraw(now, palette)

    def forget(self) -> None:
        """Start over for another identity: its queue is new to it, so nothing is announced as new."""
        self.entries = {}
        self.loaded = False

    def _announce(self, fresh: dict[str, PersonWorkEntry], now: datetime) -> None:
        new = [e for key, e in fresh.items() if key not in self.entries]
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
            e
            for key, e in fresh.items()
            if is_late(now, e["workItem"]["due"])
            and key in self.entries
            and not is_late(self.last_read, self.entries[key]["workItem"]["due"])
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

    def _refresh_process_filter(self) -> None:
        names = sorted({e["process"] for e in self.entries.values()})
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
        if cached is None or cached.entry != entry or cached.palette != palette:
            cached = _CachedRow(entry, palette, _static_cells(entry, palette))
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
        self.palette = palette
        chosen = self.filters()
        rows = [
            (key, self.row(key, e, now, palette)) for key, e in self.entries.items() if chosen.admits(e, now)
        ]
        column = 6 if chosen.by_due else 5
        rows.sort(key=lambda row: sort_value(row[1][column]))
        self.table.sync(rows)
        for key in set(self._rows) - set(self.entries):
            del self._rows[key]
        self._show_detail(palette)
        self.sync_bindings()

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
            detail.update(text)

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

    @on(DataTable.RowHighlighted, "#work-table")
    def _highlighted(self) -> None:
        self._show_detail(self.palette)
        self.sync_bindings()

    @on(DataTable.RowSelected, "#work-table")
    async def _selected(self) -> None:
        """Enter (or a click) decides; read-only, where nothing is decided, it opens the item's run."""
        await self.run_action("open_run" if self.permissions.read_only else "decide")

    @on(Input.Changed, "#work-filter")
    @on(Select.Changed)
    @on(Checkbox.Changed, "#work-overdue")
    def _filters_changed(self) -> None:
        if self.loaded:
            self.redraw(self.clock(), self.palette)

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
        self._cycle("#work-process", sorted({e["process"] for e in self.entries.values()}))

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
