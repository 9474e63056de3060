"""One run in full: header, steps timeline with each completion and its history, evidence, the map
with the current position, the body, and the inputs. Decide, cancel and send events from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Markdown, Static, TabbedContent, TabPane

from console.actions import bindings
from console.format import due, plain, pretty, stamp
from console.map.layout import draw_process_map
from console.palette import Palette
from console.scoped import Scoped
from console.screens.evidence import EvidencePane
from console.screens.main import focus_into
from console.views import BarOf, Line, step_data_lines, to_text, work_item_lines
from console.widgets.live_table import Column, LiveTable
from console.widgets.map_view import MapView

COLUMNS = (
    Column("step", "Step", 18),
    Column("kind", "Kind", 10),
    Column("state", "State", 9),
    Column("by", "By", 16),
    Column("at", "At", 16),
    Column("due", "Due", 10),
)
CURRENT = ("ready", "claimed", "waiting")


def header_lines(view: dict[str, Any], palette: Palette) -> list[Line]:
    run = view["run"]
    mode = " · TEST RUN" if run.get("mode") == "test" else ""
    outcome = f" ({run['outcome']})" if run.get("outcome") else ""
    state_style = palette.accent if run["state"] in ("active", "waiting") else palette.muted
    lines: list[Line] = [
        (
            f"run {run['id']} · {run['process']} v{run['version']}{mode} · {run['state']}{outcome}",
            f"bold {state_style}",
        ),
        (
            f"started by {run.get('startedBy')} at {stamp(run.get('startedAt'))} · updated {stamp(run.get('updatedAt'))}",
            palette.muted,
        ),
    ]
    ended = run.get("ended")
    if isinstance(ended, dict):
        note = f": {ended['note']}" if ended.get("note") else ""
        lines.append((f"ended by {ended.get('by')} at {stamp(ended.get('at'))}{note}", palette.warning))
    return lines


class RunScreen(Scoped, Screen[None]):
    SCOPE = "run"
    BINDINGS = bindings("run")

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.view: dict[str, Any] | None = None
        self._body: str | None = None
        self._map_key: tuple[Any, ...] | None = None
        self._bars: Callable[[str], BarOf | None] = lambda step_id: None

    def compose(self) -> ComposeResult:
        yield Static(Text(f"run {self.run_id} · loading…"), id="run-header")
        with TabbedContent(id="run-tabs"):
            with TabPane("Steps", id="run-steps"), Vertical():
                yield LiveTable(COLUMNS, id="steps-table")
                with VerticalScroll(classes="detail", id="step-detail-box"):
                    yield Static("", id="step-detail")
            with TabPane("Evidence", id="run-evidence"):
                yield EvidencePane(id="evidence-pane")
            with TabPane("Map", id="run-map"):
                yield MapView(id="run-map-view")
            with TabPane("Body", id="run-body"), VerticalScroll(can_focus=True):
                yield Markdown("", id="run-body-text", open_links=False)
            with TabPane("Inputs", id="run-inputs"), VerticalScroll(can_focus=True):
                yield Static("", id="run-inputs-text")
        yield Footer()

    @property
    def table(self) -> LiveTable:
        return self.query_one("#steps-table", LiveTable)

    def action_ready(self, action: str) -> bool:
        if self.view is None:
            return action == "close"
        over = self.view["run"]["state"] in ("ended", "cancelled")
        if action == "decide":
            return bool(self.view.get("workItems"))
        if action in ("cancel_run", "send_event"):
            return not over
        return True

    async def on_mount(self) -> None:
        self.table.focus()
        await self.reload()

    async def reload(self) -> None:
        answer = await self.apc.client.get_run(self.run_id)
        if not answer.get("ok"):
            self.apc.report_error(f"run {self.run_id}", answer)
            return
        await self.show(answer["data"])

    async def show(self, view: dict[str, Any]) -> None:
        palette, now = self.apc.palette, self.apc.now()
        self.view = view
        self._bars = await self.apc.check_bars(view["run"]["process"], int(view["run"]["version"]))
        self.query_one("#run-header", Static).update(to_text(header_lines(view, palette)))
        data_steps = (view.get("data") or {}).get("steps") or {}
        rows = []
        for step in view.get("steps") or ():
            record = data_steps.get(step["id"]) or {}
            state = step.get("state")
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
                        plain(record.get("by", "")),
                        plain(stamp(record.get("at"))),
                        due(now, step.get("due"), palette.warning, step.get("overdue"))
                        if step.get("due")
                        else plain(""),
                    ],
                )
            )
        self.table.sync(rows)
        self._show_step()
        self.query_one("#evidence-pane", EvidencePane).show(view, palette)
        self.query_one("#run-inputs-text", Static).update(
            Text(pretty((view.get("data") or {}).get("inputs") or {}))
        )
        if view.get("body") != self._body:
            self._body = view.get("body")
            await self.query_one("#run-body-text", Markdown).update(str(self._body or ""))
        await self._show_map(view)
        self.sync_bindings()

    async def _show_map(self, view: dict[str, Any]) -> None:
        run = view["run"]
        states = tuple((s["id"], s.get("state")) for s in view.get("steps") or ())
        key = (run["process"], run["version"], states, self.apc.theme)
        if key == self._map_key:
            return
        self._map_key = key
        document = await self.apc.document(run["process"], int(run["version"]))
        view_widget = self.query_one("#run-map-view", MapView)
        if document is None:
            lines = [f"{s['id']} · {s['kind']} · {s.get('state') or '—'}" for s in view.get("steps") or ()]
            note = (
                "This server does not hand out process documents, so the map cannot be drawn. Steps in order:"
            )
            view_widget.show(None, self.apc.palette, note + "\n" + "\n".join(lines))
            return
        view_widget.show(draw_process_map(document, dict(states)), self.apc.palette)

    def _show_step(self) -> None:
        detail = self.query_one("#step-detail", Static)
        key = self.table.current_key
        if self.view is None or key is None:
            detail.update("")
            return
        palette, bar = self.apc.palette, self._bars(key)
        step = next((s for s in self.view.get("steps") or () if s["id"] == key), {"id": key, "kind": "?"})
        lines: list[Line] = [(f"{key} · {step['kind']} · {step.get('state') or 'not reached'}", "bold")]
        for item in self.view.get("workItems") or ():
            if item.get("stepId") == key:
                lines.append(("open work item", palette.accent))
                lines += [(f"  {text}", style) for text, style in work_item_lines(item, palette, bar)]
        lines += step_data_lines(((self.view.get("data") or {}).get("steps") or {}).get(key), palette, bar)
        detail.update(to_text(lines))

    @on(TabbedContent.TabActivated, "#run-tabs")
    def _focus_tab(self, event: TabbedContent.TabActivated) -> None:
        focus_into(event)

    @on(DataTable.RowHighlighted, "#steps-table")
    def _highlighted(self) -> None:
        self._show_step()

    def entry_for_decision(self) -> dict[str, Any] | None:
        """The open work item of the selected step, else the first open one, in `get_work` shape."""
        if self.view is None or not self.view.get("workItems"):
            return None
        items = self.view["workItems"]
        item = next((i for i in items if i.get("stepId") == self.table.current_key), items[0])
        run = self.view["run"]
        entry = {
            "runId": run["id"],
            "process": run["process"],
            "version": run["version"],
            "mode": run["mode"],
        }
        return {**entry, "workItem": item}

    def action_decide(self) -> None:
        entry = self.entry_for_decision()
        if entry is not None:
            self.apc.open_decision(entry)

    def action_cancel_run(self) -> None:
        if self.view is not None:
            self.apc.confirm_cancel([self.view["run"]])

    def action_send_event(self) -> None:
        if self.view is not None:
            self.apc.ask_event(self.view)

    def action_show_map(self) -> None:
        self.query_one("#run-tabs", TabbedContent).active = "run-map"

    def action_close(self) -> None:
        self.dismiss(None)
