"""The main screen: a status line, the tabs (work, runs, processes, endpoint, extra panes), the footer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from console.panes.activity import ActivityPane
from console.panes.processes import ProcessesPane
from console.panes.runs import RunsPane
from console.panes.work import WorkPane
from console.scoped import Permissions
from console.session import EndpointInfo, ExtraPane


def endpoint_text(info: EndpointInfo) -> Text:
    text = Text(end="")
    text.append("MCP endpoint\n", "bold")
    text.append(f"  {info.url}\n\n")
    text.append(f"agent token (acts as {info.agent_id})\n", "bold")
    text.append(f"  {info.token}\n\n")
    if info.data_dir is not None:
        text.append("data folder\n", "bold")
        text.append(f"  {info.data_dir}\n\n")
    text.append("MCP client configuration\n", "bold")
    text.append(info.client_config())
    return text


def focus_into(event: TabbedContent.TabActivated) -> None:
    """Focus inside a newly shown tab (keys or mouse), so focus left in the hidden one cannot pull it back.

    An activation that is no longer the active tab (the first one, delivered late) is ignored.
    """
    pane = event.pane
    if event.tabbed_content.active != pane.id:
        return
    tables = pane.query("LiveTable, VirtualTable")
    target = tables.first() if tables else next((w for w in pane.query("*") if w.focusable), None)
    if target is not None:
        target.focus()


class MainScreen(Screen[None]):
    def __init__(
        self,
        permissions: Permissions,
        clock: Callable[[], datetime],
        endpoint: EndpointInfo | None,
        extra_panes: Sequence[ExtraPane],
    ) -> None:
        super().__init__(id="main")
        self.permissions = permissions
        self.clock = clock
        self.endpoint = endpoint
        self.extra_panes = list(extra_panes)

    def compose(self) -> ComposeResult:
        yield Static("", id="status")
        with TabbedContent(id="tabs", initial="work"):
            with TabPane("Work", id="work"):
                yield WorkPane(self.permissions, self.clock, id="work-pane")
            with TabPane("Runs", id="runs"):
                yield RunsPane(self.permissions, id="runs-pane")
            with TabPane("Processes", id="processes"):
                yield ProcessesPane(self.permissions, id="processes-pane")
            if self.endpoint is not None:
                with TabPane("Endpoint", id="endpoint"), VerticalScroll(can_focus=True):
                    yield Static(endpoint_text(self.endpoint), id="endpoint-text")
            for pane in self.extra_panes:
                with TabPane(pane.title, id=pane.id):
                    yield pane.build()
            with TabPane("Activity", id="activity"):
                yield ActivityPane(id="activity-pane")
        yield Static("", id="notice", classes="notice-line")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#work-table").focus()

    @property
    def work(self) -> WorkPane:
        return self.query_one("#work-pane", WorkPane)

    @property
    def runs(self) -> RunsPane:
        return self.query_one("#runs-pane", RunsPane)

    @property
    def processes(self) -> ProcessesPane:
        return self.query_one("#processes-pane", ProcessesPane)

    @property
    def activity(self) -> ActivityPane:
        return self.query_one("#activity-pane", ActivityPane)

    @property
    def active_tab(self) -> str:
        return str(self.query_one("#tabs", TabbedContent).active)

    def show_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab

    @on(TabbedContent.TabActivated, "#tabs")
    def _focus_tab(self, event: TabbedContent.TabActivated) -> None:
        focus_into(event)

    def set_status(self, text: Text) -> None:
        self.query_one("#status", Static).update(text, layout=False)  # one line: no layout
