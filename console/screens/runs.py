"""Every run the server lists, filtered by process, state and input fields, paged, live, markable.

Marks (k9s style) select runs for a bulk cancel; the confirmation names how many and which.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Select, Static

from console.actions import bindings
from console.format import SortText, plain, stamp, value_text
from console.palette import Palette
from console.scoped import Scoped
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
STATES = ("active", "waiting", "ended", "cancelled")
OVER = ("ended", "cancelled")


def parse_input_filter(text: str) -> tuple[dict[str, Any], list[str]]:
    """`field=value, other=value` to an equality filter; a value is JSON when it parses, else a string."""
    found: dict[str, Any] = {}
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
            found[name.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            found[name.strip()] = raw
    return found, problems


class RunsPane(Scoped, Vertical):
    SCOPE = "runs"
    BINDINGS = bindings("runs")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.runs: dict[str, dict[str, Any]] = {}
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

    def query_arguments(self) -> tuple[dict[str, Any], list[str]]:
        """The `list_runs` filter as typed, and what in it could not be read."""
        arguments: dict[str, Any] = {}
        process = self.query_one("#runs-process", Input).value.strip()
        if process:
            arguments["process"] = process
        state = self.query_one("#runs-state", Select).value
        if state is not Select.NULL:
            arguments["state"] = state
        inputs, problems = parse_input_filter(self.query_one("#runs-inputs", Input).value)
        if inputs:
            arguments["inputs"] = inputs
        return arguments, problems

    def show(self, runs: list[dict[str, Any]], more: bool, palette: Palette, problems: list[str]) -> None:
        fresh = {run["id"]: run for run in runs}
        if self.loaded:
            self._announce_ended(fresh)
        self.runs = fresh
        self.more = more
        self.loaded = True
        self.marked &= set(fresh)
        self.redraw(palette, problems)

    def _announce_ended(self, fresh: dict[str, dict[str, Any]]) -> None:
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
            outcome = f": {run['outcome']}" if run.get("outcome") else ""
            self.apc.toast(f"Run {run['id']} {run['state']}{outcome} ({run['process']})", live=True)
        elif ended:
            outcomes = ", ".join(run.get("outcome") or run["state"] for run in ended)
            self.apc.toast(f"{len(ended)} runs ended ({outcomes})", live=True)

    def redraw(self, palette: Palette, problems: list[str] | None = None) -> None:
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

    def row(self, run: dict[str, Any], palette: Palette) -> list[Text]:
        state_style = {"ended": palette.success, "cancelled": palette.muted, "waiting": palette.warning}.get(
            run["state"], palette.accent
        )
        if run["state"] == "ended" and run.get("outcome") in ("failed", "rejected"):
            state_style = palette.error
        inputs = ", ".join(f"{k}={value_text(v, 40)}" for k, v in (run.get("inputs") or {}).items())
        return [
            SortText("●" if run["id"] in self.marked else " ", palette.accent),
            plain(run["id"]),
            plain(run["process"]),
            plain(run.get("version")),
            plain(run["state"], state_style),
            plain(run.get("outcome") or ""),
            plain(stamp(run.get("startedAt"))),
            plain(stamp(run.get("updatedAt"))),
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
        self.apc.reload_soon()

    def action_filter(self) -> None:
        self.query_one("#runs-inputs", Input).focus()

    def action_open_run(self) -> None:
        run_id = self.selected_id()
        if run_id is not None:
            self.apc.open_run(run_id)

    def action_toggle_mark(self) -> None:
        run_id = self.selected_id()
        if run_id is None:
            return
        self.marked ^= {run_id}
        self.redraw(self.apc.palette)
        self.table.action_cursor_down()

    def action_cancel_run(self) -> None:
        run_id = self.selected_id()
        if run_id is not None:
            self.apc.confirm_cancel([self.runs[run_id]])

    def action_bulk_cancel(self) -> None:
        marked = [self.runs[run_id] for run_id in self.table.keys if run_id in self.marked]
        if marked:
            self.apc.confirm_cancel(marked)

    def action_load_more(self) -> None:
        self.pages += 1
        self.apc.reload_soon()
