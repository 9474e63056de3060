"""Published processes: what each does, what it needs to start, what it requires, and its map.

`list_processes` gives name, description, version, inputs and requires; the body and the map need
the document itself, which only the embedded engine hands out, so those tabs say so elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Markdown, Static, TabbedContent, TabPane

from console.client.wire import ProcessSummary
from console.keys.registry import bindings
from console.keys.scoped import Permissions, Scoped
from console.map.layout import draw_process_map
from console.messages import StartRunRequested
from console.views.format import plain
from console.views.palette import Palette
from console.views.render import Line, to_text
from console.widgets.fields import declared_fields
from console.widgets.live_table import Column, LiveTable
from console.widgets.map_view import MapView
from engine.document.model import Process

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


def input_lines(process: ProcessSummary, palette: Palette) -> list[Line]:
    lines: list[Line] = [(process["description"], ""), ("", "")]
    fields = declared_fields(process["inputs"], "inputs")
    lines.append((f"version {process['version']} · inputs", "bold"))
    for field in fields:
        extra = " (optional)" if field.optional else ""
        choices = f" one of {', '.join(map(str, field.one_of))}" if field.one_of else ""
        described = f" — {field.description}" if field.description else ""
        lines.append((f"  {field.name}: {field.type}{extra}{choices}{described}", ""))
    if not fields:
        lines.append(("  none", palette.muted))
    systems = process["requires"]["systems"] if "requires" in process else []
    if systems:
        lines.append(("requires access to: " + ", ".join(systems), palette.warning))
    return lines


class ProcessesPane(Scoped, Vertical):
    SCOPE = "processes"
    BINDINGS = bindings("processes")

    def __init__(self, permissions: Permissions, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.permissions = permissions
        self.palette = Palette()
        self.processes: dict[str, ProcessSummary] = {}
        self.documents: Mapping[str, Process | None] = {}
        """By process name, the listed version's document; None where the server hands none out."""
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

    def show(
        self, processes: list[ProcessSummary], documents: Mapping[str, Process | None], palette: Palette
    ) -> None:
        self.processes = {p["name"]: p for p in processes}
        self.documents = documents
        self.palette = palette
        rows = []
        for p in processes:
            systems = ", ".join(p["requires"]["systems"] if "requires" in p else ())
            rows.append(
                (
                    p["name"],
                    [
                        plain(p["name"]),
                        plain(p["version"]),
                        plain(", ".join(p["inputs"])),
                        plain(systems),
                        plain(p["description"]),
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
        process, palette = self.processes[name], self.palette
        self.query_one("#process-info", Static).update(to_text(input_lines(process, palette)))
        document = self.documents.get(name)
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
            self.post_message(StartRunRequested(self.processes[name]))
