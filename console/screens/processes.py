"""Published processes: what each does, what it needs to start, what it requires, and its map.

`list_processes` gives name, description, version, inputs and requires; the body and the map need
the document itself, which only the embedded engine hands out, so those tabs say so elsewhere.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Markdown, Static, TabbedContent, TabPane

from console.actions import bindings
from console.format import plain
from console.map.layout import draw_process_map
from console.modals.fields import declared_fields
from console.palette import Palette
from console.scoped import Scoped
from console.views import Line, to_text
from console.widgets.live_table import Column, LiveTable
from console.widgets.map_view import MapView

COLUMNS = (
    Column("name", "Process", 26),
    Column("version", "v", 3),
    Column("inputs", "Inputs", 24),
    Column("requires", "Requires", 18),
    Column("description", "Description", 70),
)
NO_DOCUMENT = (
    "This server does not hand out process documents over the protocol, so there is no map or body here."
)


def input_lines(process: dict[str, Any], palette: Palette) -> list[Line]:
    lines: list[Line] = [(process.get("description", ""), ""), ("", "")]
    fields = declared_fields(process.get("inputs"), "inputs")
    lines.append((f"version {process.get('version')} · inputs", "bold"))
    for field in fields:
        extra = " (optional)" if field.optional else ""
        choices = f" one of {', '.join(map(str, field.one_of))}" if field.one_of else ""
        described = f" — {field.description}" if field.description else ""
        lines.append((f"  {field.name}: {field.type}{extra}{choices}{described}", ""))
    if not fields:
        lines.append(("  none", palette.muted))
    systems = (process.get("requires") or {}).get("systems")
    if systems:
        lines.append(("requires access to: " + ", ".join(systems), palette.warning))
    return lines


class ProcessesPane(Scoped, Vertical):
    SCOPE = "processes"
    BINDINGS = bindings("processes")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.processes: dict[str, dict[str, Any]] = {}
        self._shown: str | None = None

    def compose(self) -> ComposeResult:
        yield LiveTable(COLUMNS, id="processes-table")
        with TabbedContent(id="process-detail"):
            with TabPane("About", id="process-about"), VerticalScroll():
                yield Static("", id="process-info")
            with TabPane("Map", id="process-map-tab"):
                yield MapView(id="process-map")
            with TabPane("Body", id="process-body-tab"), VerticalScroll():
                yield Markdown("", id="process-body", open_links=False)

    @property
    def table(self) -> LiveTable:
        return self.query_one("#processes-table", LiveTable)

    def action_ready(self, action: str) -> bool:
        return self.table.current_key is not None

    def show(self, processes: list[dict[str, Any]], palette: Palette) -> None:
        self.processes = {p["name"]: p for p in processes}
        rows = []
        for p in processes:
            systems = ", ".join((p.get("requires") or {}).get("systems") or ())
            rows.append(
                (
                    p["name"],
                    [
                        plain(p["name"]),
                        plain(p.get("version")),
                        plain(", ".join(p.get("inputs") or {})),
                        plain(systems),
                        plain(p.get("description", "")),
                    ],
                )
            )
        self.table.sync(rows)
        self._shown = None
        self.call_later(self.show_selected)

    async def show_selected(self) -> None:
        name = self.table.current_key
        if name is None or name == self._shown or name not in self.processes:
            return
        self._shown = name
        process = self.processes[name]
        palette = self.apc.palette
        self.query_one("#process-info", Static).update(to_text(input_lines(process, palette)))
        document = await self.apc.document(name, int(process.get("version", 0)))
        body = self.query_one("#process-body", Markdown)
        view = self.query_one("#process-map", MapView)
        if document is None:
            view.show(None, palette, NO_DOCUMENT)
            await body.update(NO_DOCUMENT)
            return
        view.show(draw_process_map(document), palette)
        await body.update(document.body)

    @on(DataTable.RowHighlighted, "#processes-table")
    async def _highlighted(self) -> None:
        self.sync_bindings()
        await self.show_selected()

    @on(DataTable.RowSelected, "#processes-table")
    async def _selected(self) -> None:
        await self.run_action("start_selected")

    def action_start_selected(self) -> None:
        name = self.table.current_key
        if name is not None:
            self.apc.start_run_of(self.processes[name])
