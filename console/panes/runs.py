"""Every run the server lists, filtered by process, state and input fields, paged, live, markable.

Marks (k9s style) select runs for a bulk cancel; the confirmation names how many and which.
"""

from __future__ import annotations

import json
from typing import TypedDict

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Select, Static

from console.actions import bindings
from console.client.wire import Json, RunState, RunSummary
from console.format import SortText, plain, stamp, value_text
from console.messages import CancelRequested, Notice, OpenRun, RefreshRequested
from console.palette import Palette
from console.scoped import Permissions, Scoped
from console.widgets.live_table import Column, LiveTable

COLUMNS = (
    Column("mark", "", 1),
    Column("run", "Run", 12),
    Column("process", "Process", 18),
    Column("version", "v", 3),
    Column("state", "State", 9),
    Column("outcome", "Outcome", 12),
    Column("started", "Started", 16),
    Column("updated", "Updated", 16),
    Column("inputs", "Inputs", 60),
)
STATES: tuple[RunState, ...] = ("active", "waiting", "ended", "cancelled")
OVER = ("ended", "cancelled")


class RunsQuery(TypedDict, total=False):
    """The `list_runs` filter the pane's filter bar asks for."""

    process: str
    state: RunState
    inputs: dict[str, Json]


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
        self.runs: dict[str, RunSummary] = {}
        self.marked: set[str] = set()
        self.pages = 1
        self.more = False
        self.loaded = False

    def compose(self) -> ComposeResult:
        with Horizontal(classes="filters"):
            yield Input(placeholder="process", id="runs-process", compact=True)
            yield Select([(Text(s), s) for s in STATES], prompt="any state", id="runs-state", compact=True)
            yield Input(placeholder="/ input field=value, …", id="runs-inputs", compact=True)
        yield LiveTable(COLUMNS, id="runs-table")
        yield Static("", id="runs-status", classes="status-line")

    @property
    def table(self) -> LiveTable:
        return self.query_one("#runs-table", LiveTable)

    def action_ready(self, action: str) -> bool:
        if action in ("open_run", "cancel_run", "toggle_mark"):
            return self.table.current_key is not None
        if action == "bulk_cancel":
            return bool(self.marked)
        if action == "load_more":
            return self.more
        return True

    def query_arguments(self) -> tuple[RunsQuery, list[str]]:
        """The `list_runs` filter as typed, and what in it could not be read."""
        arguments: RunsQuery = {}
        process = self.query_one("#runs-process", Input).value.strip()
        if process:
            arguments["process"] = process
        state = self.query_one("#runs-state", Select).value
        chosen = next((s for s in STATES if s == state), None)
        if chosen is not None:
            arguments["state"] = chosen
        inputs, problems = parse_input_filter(self.query_one("#runs-inputs", Input).value)
        if inputs:
            arguments["inputs"] = inputs
        return arguments, problems

    def show(self, runs: list[RunSummary], more: bool, palette: Palette, problems: list[str]) -> None:
        fresh = {run["id"]: run for run in runs}
        if self.loaded:
            self._announce_ended(fresh)
        self.runs = fresh
        self.more = more
        self.loaded = True
        self.marked &= set(fresh)
        self.redraw(palette, problems)

    def _announce_ended(self, fresh: dict[str, RunSummary]) -> None:
        """One toast for one run that ended, one line for several, so a busy server does not bury the screen."""
        ended = [
            run
            for run_id, run in fresh.items()
            if (before := self.runs.get(run_id)) is not None
            and before["state"] not in OVER
            and run["state"] in OVER
        ]
        if len(ended) == 1:
            run = ended[0]
            outcome = f": {run['outcome']}" if run["outcome"] else ""
            self.post_message(
                Notice(f"Run {run['id']} {run['state']}{outcome} ({run['process']})", live=True)
            )
        elif ended:
            outcomes = ", ".join(run["outcome"] or run["state"] for run in ended)
            self.post_message(Notice(f"{len(ended)} runs ended ({outcomes})", live=True))

    def redraw(self, palette: Palette, problems: list[str] | None = None) -> None:
        self.palette = palette
        rows = [(run_id, self.row(run, palette)) for run_id, run in self.runs.items()]
        self.table.sync(rows)
        parts = [f"{len(self.runs)} runs"]
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        if self.more:
            parts.append("more on the server: m loads the next page")
        line = " · ".join(parts)
        if problems:
            line += " · filter: " + "; ".join(problems)
        self.query_one("#runs-status", Static).update(
            Text(line, style=palette.warning if problems else "dim")
        )
        self.sync_bindings()

    def row(self, run: RunSummary, palette: Palette) -> list[Text]:
        state_style = {"ended": palette.success, "cancelled": palette.muted, "waiting": palette.warning}.get(
            run["state"], palette.accent
        )
        if run["state"] == "ended" and run["outcome"] in ("failed", "rejected"):
            state_style = palette.error
        inputs = ", ".join(f"{k}={value_text(v, 40)}" for k, v in run["inputs"].items())
        return [
            SortText("●" if run["id"] in self.marked else " ", palette.accent),
            plain(run["id"]),
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

    @on(DataTable.RowSelected, "#runs-table")
    async def _selected(self) -> None:
        await self.run_action("open_run")

    @on(DataTable.RowHighlighted, "#runs-table")
    def _highlighted(self) -> None:
        self.sync_bindings()

    @on(Input.Submitted)
    @on(Select.Changed, "#runs-state")
    def _filter_changed(self) -> None:
        self.pages = 1
        self.table.focus()
        self.post_message(RefreshRequested())

    def action_filter(self) -> None:
        self.query_one("#runs-inputs", Input).focus()

    def action_open_run(self) -> None:
        run_id = self.selected_id()
        if run_id is not None:
            self.post_message(OpenRun(run_id))

    def action_toggle_mark(self) -> None:
        run_id = self.selected_id()
        if run_id is None:
            return
        self.marked ^= {run_id}
        self.redraw(self.palette)
        self.table.action_cursor_down()

    def action_cancel_run(self) -> None:
        run_id = self.selected_id()
        if run_id is not None:
            self.post_message(CancelRequested([self.runs[run_id]]))

    def action_bulk_cancel(self) -> None:
        marked = [self.runs[run_id] for run_id in self.table.keys if run_id in self.marked]
        if marked:
            self.post_message(CancelRequested(marked))

    def unmark(self, run_ids: set[str]) -> None:
        """Forget the marks of runs a bulk action is done with."""
        self.marked -= run_ids

    def action_load_more(self) -> None:
        self.pages += 1
        self.post_message(RefreshRequested())
