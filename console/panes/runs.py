"""Every run the server lists, filtered by process, state and input fields, paged, live, markable.

The list is a `PagedList` read page by page as the view needs it (newest first, the server's order).
The search box takes a process name (the server filters by it), a whole run id (that run opens, loaded
or not), or anything else: a run id prefix or part of a process name, searched among the loaded rows,
as the status line says. State and input filters go to the server.

The cursor stays on its run, wherever it is: a run the operator chose is the one `x` cancels, even as
new runs arrive. A view at the top stays there, so the newest runs come into sight above the cursor;
further down the view moves with the cursor, and the runs that came above it are counted on the status
line (`newer runs above`) until the operator scrolls up to them. Marks (k9s style) select runs for a
bulk cancel, and survive paging: a marked run whose page is let go is still marked. The confirmation
names how many and which.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Select, Static

from console.client.wire import Json, RunState, RunSummary
from console.keys.registry import bindings
from console.keys.scoped import Permissions, Scoped
from console.live.lists import RunsQuery, run_key
from console.live.paging import Change, KeptRows, PagedList, Window
from console.messages import CancelRequested, FindRun, Notice, OpenRun, RefreshRequested, RowsWanted
from console.panes.work import wants_rows, window_text
from console.views.answer import OVER
from console.views.format import SortText, counted, plain, short_id, stamp, unique_prefix, value_text
from console.views.palette import Palette
from console.widgets.columns import longest
from console.widgets.live_table import Column
from console.widgets.virtual_table import VirtualTable

COLUMNS = (
    Column("mark", "", 1),
    Column("run", "Run", 8),
    Column("process", "Process", 18, least=10, most=32),
    Column("version", "v", 3, drop=3),
    Column("state", "State", 9),
    Column("outcome", "Outcome", 12, least=7, most=24),
    Column("started", "Started", 16, drop=2),
    Column("updated", "Updated", 16, drop=1),
    Column("inputs", "Inputs", 60, least=20, grow=True),
)
STATES: tuple[RunState, ...] = ("active", "waiting", "ended", "cancelled")


def parse_input_filter(text: str) -> tuple[dict[str, Json], list[str]]:
    """`field=value, other=value` to an equality filter; a value is JSON when it parses, else a string."""
    found: dict[str, Json] = {}
    problems: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, raw = part.partition("=")
        if not sep or not name.strip():
            problems.append(f"'{part}': write field=value")
            continue
        raw = raw.strip()
        try:
            value: Json = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        found[name.strip()] = value
    return found, problems


class RunsPane(Scoped, Vertical):
    SCOPE = "runs"
    BINDINGS = bindings("runs")

    def __init__(self, permissions: Permissions, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.permissions = permissions
        self.palette = Palette()
        self.pages: PagedList[RunSummary] = PagedList.whole([], run_key)
        self.runs = KeptRows(self.pages)
        self.marked: set[str] = set()
        self._marked_rows: dict[str, RunSummary] = {}
        """Marked runs as last read, so a bulk cancel can name runs whose page was let go."""
        self.loaded = False
        self.progress = ""
        self.problems: list[str] = []
        self.process_names: set[str] = set()
        """Published process names (from above): a search that is one is the server's process filter."""
        self.newer = 0
        """Rows that arrived above the view while the cursor stayed on its run."""
        self.run_chars = unique_prefix(())
        """Characters of a run id shown: enough to tell apart every run loaded."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="filters"):
            yield Input(placeholder="/ run id or process", id="runs-search", compact=True)
            yield Select([(Text(s), s) for s in STATES], prompt="any state", id="runs-state", compact=True)
            yield Input(placeholder="input field=value, …", id="runs-inputs", compact=True)
        yield VirtualTable(COLUMNS, source=self._cells, id="runs-table")
        yield Static("", id="runs-status", classes="status-line")

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#runs-table", VirtualTable)

    @property
    def more(self) -> bool:
        return self.pages.more

    def action_ready(self, action: str) -> bool:
        if action in ("open_run", "cancel_run", "toggle_mark"):
            return self.table.current_key is not None
        if action in ("bulk_cancel", "clear_marks"):
            return bool(self.marked)
        if action == "load_more":
            return self.more
        return True

    def query_arguments(self) -> tuple[RunsQuery, list[str]]:
        """The `list_runs` filter as typed, and what in it could not be read."""
        arguments: RunsQuery = {}
        process = self._search_text()
        if process in self.process_names:
            arguments["process"] = process
        state = self.query_one("#runs-state", Select).value
        chosen = next((s for s in STATES if s == state), None)
        if chosen is not None:
            arguments["state"] = chosen
        inputs, problems = parse_input_filter(self.query_one("#runs-inputs", Input).value)
        if inputs:
            arguments["inputs"] = inputs
        return arguments, problems

    def show(
        self,
        runs: list[RunSummary] | PagedList[RunSummary],
        more: bool,
        palette: Palette,
        problems: list[str],
        changes: list[Change[RunSummary]] | None = None,
    ) -> None:
        """Take a fresh read: the paged list, or a list read whole (`more`: the server holds more);
        `changes`: the list's changes when the caller took them (to tell of runs that ended), else
        the pane takes them. A read that ends after the console began to close is left alone."""
        if not self.is_attached:
            return
        if isinstance(runs, PagedList):
            pages = runs
        else:
            pages = self.pages if self.loaded else PagedList.whole([], run_key)
            pages.replace(runs)
            if more:
                pages.more_on_server()
        if changes is None:
            changes = pages.take_changes()
        self.pages = pages
        self.runs = KeptRows(pages)
        if not self.loaded or any(
            is_new or before is None or before["outcome"] != run["outcome"] for before, run, is_new in changes
        ):
            self._measure()
        self.loaded = (
            pages.started
        )  # a list not read yet (a tab built before its first read) is measured again
        for _, run, _ in changes:
            if run["id"] in self._marked_rows:
                self._marked_rows[run["id"]] = run
        self.problems = problems
        self.redraw(palette, problems)

    def _measure(self) -> None:
        """Fit the columns to what the loaded rows hold; run ids to a prefix unique among them."""
        runs = self.pages.kept()
        self.run_chars = unique_prefix(self.pages.keys)
        self.table.fit_columns(
            {
                "run": longest(short_id(run_id, self.run_chars) for run_id in self.pages.keys),
                "process": longest(run["process"] for run in runs),
                "outcome": longest(run["outcome"] or "" for run in runs),
            }
        )

    def _search_text(self) -> str:
        return self.query_one("#runs-search", Input).value.strip()

    def needle(self) -> str:
        """What the search looks for among the loaded rows ('' when it is a process name or empty)."""
        text = self._search_text()
        return "" if text in self.process_names else text.lower()

    def found(self, needle: str) -> list[str]:
        """Loaded runs whose id starts with `needle` or whose process name holds it."""
        return [
            key
            for key, run in self.runs.items()
            if key.lower().startswith(needle) or needle in run["process"].lower()
        ]

    def clear_search(self) -> None:
        self.query_one("#runs-search", Input).value = ""

    def redraw(self, palette: Palette, problems: list[str] | None = None) -> None:
        self.palette = palette
        if problems is not None:
            self.problems = problems
        needle = self.needle()
        self._place(self.found(needle) if needle else self.pages.keys)
        self.table.refresh_rows()
        self.show_status()
        self.sync_bindings()

    def _place(self, keys: list[str]) -> None:
        """Show `keys` with the cursor on its run: a view at the top stays at the top while the cursor is
        still in it; elsewhere the view moves with the cursor, and the rows that came above it are counted."""
        table = self.table
        key, row, top = table.current_key, table.cursor_row, table.window.first
        table.set_keys(keys)
        if top == 0 and table.cursor_row < table.visible_rows:
            table.scroll_to(y=0, animate=False, immediate=True)
        elif key is not None and table.current_key == key and table.cursor_row > row:
            self.newer += table.cursor_row - row
        self.newer = min(self.newer, table.window.first)

    def show_status(self) -> None:
        window = self.table.window
        parts = [window_text(window.first, window.last, self.table.row_count, self.pages.more) + " runs"]
        if self.newer:
            parts.insert(0, f"↑ {counted(self.newer, 'newer run')} above (g)")
        needle = self.needle()
        if needle:
            parts.append(f"search '{needle}' among the {len(self.pages.keys):,} loaded runs")
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        if self.progress:
            parts.append(self.progress)
        elif self.pages.more:
            parts.append("more on the server: m loads the next page, G all")
        line = " · ".join(parts)
        if self.problems:
            line += " · filter: " + "; ".join(self.problems)
        text = Text(line, style=self.palette.warning if self.problems else "dim")
        status = self.query_one("#runs-status", Static)
        shown = status.content
        if not isinstance(shown, Text) or (shown.plain, shown.style) != (text.plain, text.style):
            status.update(text, layout=False)  # one line: no layout of the screen

    def _cells(self, key: str) -> list[Text] | None:
        run = self.pages.row(key)
        return None if run is None else self.row(run, self.palette)

    def row(self, run: RunSummary, palette: Palette) -> list[Text]:
        state_style = {"ended": palette.success, "cancelled": palette.muted, "waiting": palette.warning}.get(
            run["state"], palette.accent
        )
        if run["state"] == "ended" and run["outcome"] in ("failed", "rejected"):
            state_style = palette.error
        inputs = ", ".join(f"{k}={value_text(v, 40)}" for k, v in run["inputs"].items())
        return [
            SortText("●" if run["id"] in self.marked else " ", palette.accent),
            plain(short_id(run["id"], self.run_chars)),
            plain(run["process"]),
            plain(run["version"]),
            plain(run["state"], state_style),
            plain(run["outcome"] or ""),
            plain(stamp(run["startedAt"])),
            plain(stamp(run["updatedAt"])),
            plain(inputs),
        ]

    def selected_id(self) -> str | None:
        return self.table.current_key

    @on(VirtualTable.RowSelected, "#runs-table")
    async def _selected(self) -> None:
        await self.run_action("open_run")

    @on(VirtualTable.RowHighlighted, "#runs-table")
    def _highlighted(self) -> None:
        self.sync_bindings()

    @on(VirtualTable.WindowChanged, "#runs-table")
    def _scrolled(self, event: VirtualTable.WindowChanged) -> None:
        self.newer = min(self.newer, max(0, event.window.first))
        self.show_status()
        if not self.needle() and wants_rows(self.pages, event.window):
            self.post_message(RowsWanted("runs", event.window))

    @on(VirtualTable.BottomRequested, "#runs-table")
    def _to_the_end(self) -> None:
        if self.pages.more:
            self.post_message(RowsWanted("runs", Window(0, -1), to_end=True))

    @on(Input.Changed, "#runs-search")
    def _search_typed(self) -> None:
        if self.loaded:
            self.redraw(self.palette)

    @on(Input.Submitted)
    @on(Select.Changed, "#runs-state")
    def _filter_changed(self, event: Input.Submitted | Select.Changed) -> None:
        self.table.focus()
        self.post_message(RefreshRequested())
        text = self._search_text()
        if isinstance(event, Input.Submitted) and event.input.id == "runs-search" and self.needle():
            if text in self.runs:
                self.clear_search()
                self.post_message(OpenRun(text))
            elif " " not in text:
                self.post_message(FindRun(text))

    def action_filter(self) -> None:
        self.query_one("#runs-search", Input).focus()

    def action_open_run(self) -> None:
        run_id = self.selected_id()
        if run_id is not None:
            self.post_message(OpenRun(run_id))

    def action_toggle_mark(self) -> None:
        run_id = self.selected_id()
        if run_id is None:
            return
        run = self.runs.get(run_id)
        if run_id not in self.marked and run is not None and run["state"] in OVER:
            self.post_message(
                Notice(
                    f"{run_id} {'has ended' if run['state'] == 'ended' else 'was cancelled'}:"
                    " only active or waiting runs can be marked to cancel",
                    severity="warning",
                )
            )
            return
        self.marked ^= {run_id}
        if run_id in self.marked:
            self._marked_rows[run_id] = self.runs[run_id]
        else:
            self._marked_rows.pop(run_id, None)
        self.table.refresh_rows()
        self.show_status()
        self.sync_bindings()
        self.table.action_cursor_down()

    def action_clear_marks(self) -> None:
        self.unmark(set(self.marked))
        self.table.refresh_rows()
        self.show_status()
        self.sync_bindings()

    def action_cancel_run(self) -> None:
        run_id = self.selected_id()
        if run_id is not None:
            self.post_message(CancelRequested([self.runs[run_id]]))

    def action_bulk_cancel(self) -> None:
        order = {key: index for index, key in enumerate(self.pages.keys) if key in self.marked}
        marked = [
            self._marked_rows[key] for key in sorted(self.marked, key=lambda k: order.get(k, len(order)))
        ]
        if marked:
            self.post_message(CancelRequested(marked))

    def unmark(self, run_ids: set[str]) -> None:
        """Forget the marks of runs a bulk action is done with."""
        self.marked -= run_ids
        for run_id in run_ids:
            self._marked_rows.pop(run_id, None)

    def action_load_more(self) -> None:
        self.post_message(RowsWanted("runs", Window(len(self.pages.keys), len(self.pages.keys))))
