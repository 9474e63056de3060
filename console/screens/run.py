"""One run in full: header, steps with each completion and its history (and who holds a claim until
when), the timeline of everything that happened, evidence, the map with the current position, the
body, and the inputs. Decide, cancel and send events from here; `[`/`]` (`h`/`l`) switch tabs.

The screen is given the run as read (`RunDetail`) and asks the app, by message, for every action.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Markdown, Static, TabbedContent, TabPane

from console.client.run_log import RunLog
from console.client.wire import RunView, StepView
from console.keys.registry import bindings
from console.keys.scoped import Permissions, Scoped
from console.map.layout import draw_process_map
from console.messages import CancelRequested, DecideInRunRequested, EventRequested
from console.panes.evidence import EvidencePane
from console.screens.main import focus_into
from console.views.answer import CURRENT
from console.views.format import due, plain, pretty, stamp
from console.views.palette import Palette
from console.views.render import BarOf, Hanging, Line, step_data_lines, to_text, work_item_lines
from console.views.timeline import claims, from_log, from_view, timeline_lines
from console.widgets.footer import Footer
from console.widgets.live_table import Column, LiveTable
from console.widgets.map_view import MapView
from console.widgets.scroll_pane import ScrollPane
from engine.document.model import Process

COLUMNS = (
    Column("step", "Step", 18),
    Column("kind", "Kind", 10),
    Column("state", "State", 9),
    Column("by", "By", 16),
    Column("at", "At", 16),
    Column("due", "Due", 10),
    Column("claim", "Claim", 30),
)
TABS = ("run-steps", "run-timeline", "run-evidence", "run-map", "run-body", "run-inputs")


def no_bars(step_id: str) -> BarOf | None:
    return None


@dataclass(frozen=True)
class RunDetail:
    """A run as the app read it: the view, the document of its version (None from a server that does
    not hand documents out), and per step the bar each verdict question had to clear."""

    view: RunView
    document: Process | None = None
    bars: Callable[[str], BarOf | None] = no_bars
    log: RunLog | None = None
    """The run log, when the server offers one (`apc_run_log`) and it was read."""
    log_note: str = ""
    """Why there is no log: the server does not offer one, or reading it failed."""


def header_lines(view: RunView, palette: Palette) -> list[Line]:
    run = view["run"]
    mode = " · TEST RUN" if run["mode"] == "test" else ""
    outcome = f" ({run['outcome']})" if run["outcome"] else ""
    state_style = palette.accent if run["state"] in ("active", "waiting") else palette.muted
    lines: list[Line] = [
        (
            f"run {run['id']} · {run['process']} v{run['version']}{mode} · {run['state']}{outcome}",
            f"bold {state_style}",
        ),
        (
            f"started by {run['startedBy']} at {stamp(run['startedAt'])} · updated {stamp(run['updatedAt'])}",
            palette.muted,
        ),
    ]
    ended = run["ended"]
    if ended is not None:
        note = f": {ended['note']}" if ended["note"] else ""
        lines.append((f"ended by {ended['by']} at {stamp(ended['at'])}{note}", palette.warning))
    return lines


class RunScreen(Scoped, Screen[None]):
    SCOPE = "run"
    BINDINGS = bindings("run")

    def __init__(self, run_id: str, permissions: Permissions) -> None:
        super().__init__()
        self.run_id = run_id
        self.permissions = permissions
        self.detail: RunDetail | None = None
        self.palette = Palette()
        self._body: str | None = None
        self._map_key: tuple[object, ...] | None = None

    @property
    def view(self) -> RunView | None:
        return None if self.detail is None else self.detail.view

    def compose(self) -> ComposeResult:
        yield Static(Text(f"run {self.run_id} · loading…"), id="run-header")
        with TabbedContent(id="run-tabs"):
            with TabPane("Steps", id="run-steps"), Vertical():
                yield LiveTable(COLUMNS, id="steps-table")
                with VerticalScroll(classes="detail", id="step-detail-box"):
                    yield Static("", id="step-detail")
            with TabPane("Timeline", id="run-timeline"), ScrollPane(id="timeline-box"):
                yield Static("", id="timeline-text")
            with TabPane("Evidence", id="run-evidence"):
                yield EvidencePane(self.permissions, id="evidence-pane")
            with TabPane("Map", id="run-map"):
                yield MapView(id="run-map-view")
            with TabPane("Body", id="run-body"), VerticalScroll(can_focus=True):
                yield Markdown("", id="run-body-text", open_links=False)
            with TabPane("Inputs", id="run-inputs"), VerticalScroll(can_focus=True):
                yield Static("", id="run-inputs-text")
        yield Static("", id="notice", classes="notice-line")
        yield Footer()

    @property
    def table(self) -> LiveTable:
        return self.query_one("#steps-table", LiveTable)

    @property
    def evidence(self) -> EvidencePane:
        return self.query_one("#evidence-pane", EvidencePane)

    def action_ready(self, action: str) -> bool:
        view = self.view
        if view is None:
            return action == "close"
        over = view["run"]["state"] in ("ended", "cancelled")
        if action == "decide":
            return bool(view["workItems"])
        if action in ("cancel_run", "send_event"):
            return not over
        return True

    def on_mount(self) -> None:
        self.table.focus()

    async def show(self, detail: RunDetail, now: datetime, palette: Palette) -> None:
        self.detail, self.palette = detail, palette
        view = detail.view
        self.query_one("#run-header", Static).update(to_text(header_lines(view, palette)))
        data_steps = view["data"]["steps"]
        held = claims(detail.log)
        rows = []
        for step in view["steps"]:
            record = data_steps.get(step["id"])
            state = step["state"]
            style = {"done": palette.success, "failed": palette.error, "cancelled": palette.muted}.get(
                str(state), palette.current if state in CURRENT else palette.muted
            )
            rows.append(
                (
                    step["id"],
                    [
                        plain(step["id"]),
                        plain(step["kind"]),
                        plain(state or "—", style),
                        plain(record.get("by", "") if record else ""),
                        plain(stamp(record.get("at") if record else None)),
                        _due(step, now, palette),
                        _claim(step, held.get(step["id"]), detail.log is not None, palette),
                    ],
                )
            )
        self.table.sync(rows)
        self._show_step()
        self.evidence.show(view, palette)
        self.query_one("#run-inputs-text", Static).update(Text(pretty(view["data"]["inputs"])))
        if view["body"] != self._body:
            self._body = view["body"]
            await self.query_one("#run-body-text", Markdown).update(self._body)
        self._show_map(detail, palette)
        self._show_timeline(detail, palette)
        self.sync_bindings()

    def _show_timeline(self, detail: RunDetail, palette: Palette) -> None:
        if detail.log is not None:
            items = from_log(detail.log)
            source = f"The server's run log: {len(detail.log['entries'])} entries, oldest first."
        else:
            items = from_view(detail.view)
            source = f"Pieced together from the run as get_run shows it ({detail.log_note})."
        self.query_one("#timeline-text", Static).update(to_text(timeline_lines(items, palette, source)))

    def _show_map(self, detail: RunDetail, palette: Palette) -> None:
        view = detail.view
        run = view["run"]
        states = tuple((s["id"], s["state"]) for s in view["steps"])
        key = (run["process"], run["version"], states, palette)
        if key == self._map_key:
            return
        self._map_key = key
        view_widget = self.query_one("#run-map-view", MapView)
        if detail.document is None:
            lines = [f"{s['id']} · {s['kind']} · {s['state'] or '—'}" for s in view["steps"]]
            note = (
                "This server does not hand out process documents, so the map cannot be drawn. Steps in order:"
            )
            view_widget.show(None, palette, note + "\n" + "\n".join(lines))
            return
        view_widget.show(draw_process_map(detail.document, dict(states)), palette)

    def _show_step(self) -> None:
        detail = self.query_one("#step-detail", Static)
        key = self.table.current_key
        if self.detail is None or key is None:
            detail.update("")
            return
        view, palette, bar = self.detail.view, self.palette, self.detail.bars(key)
        step = next((s for s in view["steps"] if s["id"] == key), None)
        kind, state = (step["kind"], step["state"]) if step is not None else ("?", None)
        lines: list[Line] = [(f"{key} · {kind} · {state or 'not reached'}", "bold")]
        for item in view["workItems"]:
            if item["stepId"] == key:
                lines.append(("open work item", palette.accent))
                lines += [(f"  {text}", style) for text, style in work_item_lines(item, palette, bar)]
        lines += step_data_lines(view["data"]["steps"].get(key), palette, bar)
        detail.update(Hanging(lines))

    @on(TabbedContent.TabActivated, "#run-tabs")
    def _focus_tab(self, event: TabbedContent.TabActivated) -> None:
        focus_into(event)

    @on(DataTable.RowHighlighted, "#steps-table")
    def _highlighted(self) -> None:
        self._show_step()

    def action_decide(self) -> None:
        """From any tab (steps, evidence, ...): the caller's item at the selected step, or ask which."""
        if self.view is not None:
            self.post_message(DecideInRunRequested(self.run_id, self.table.current_key))

    def action_cancel_run(self) -> None:
        if self.view is not None:
            self.post_message(CancelRequested([self.view["run"]]))

    def action_send_event(self) -> None:
        if self.view is not None:
            self.post_message(EventRequested(self.view))

    def action_show_map(self) -> None:
        self.query_one("#run-tabs", TabbedContent).active = "run-map"

    def _step_tab(self, by: int) -> None:
        tabs = self.query_one("#run-tabs", TabbedContent)
        at = TABS.index(tabs.active) if tabs.active in TABS else 0
        tabs.active = TABS[(at + by) % len(TABS)]

    def action_next_tab(self) -> None:
        self._step_tab(1)

    def action_prev_tab(self) -> None:
        self._step_tab(-1)

    def action_close(self) -> None:
        self.dismiss(None)


def _claim(step: StepView, held: tuple[str, str] | None, logged: bool, palette: Palette) -> Text:
    """Who holds a claimed step, until when; the run log says, get_run alone does not."""
    if step["state"] != "claimed":
        return plain("")
    if held is None:
        return plain("—" if logged else "not shown by this server", palette.muted)
    return plain(f"{held[0]} · until {stamp(held[1])[11:]}", palette.accent)


def _due(step: StepView, now: datetime, palette: Palette) -> Text:
    value = step.get("due")
    return due(now, value, palette.warning, step.get("overdue")) if value else plain("")
