"""The main screen: a status line, the tabs (work, runs, processes, endpoint, extra panes), the footer.

Only the work queue is built with the screen: the first screen is up sooner without the panes no one
sees yet; each other tab (the runs list too: the app tells of runs that end from its own reads) is
built the first time it is shown, and the tabs other parts of the product add once the first screen
is up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from console.keys.scoped import Permissions
from console.live.session import EndpointInfo, ExtraPane
from console.panes.activity import ActivityPane
from console.panes.processes import ProcessesPane
from console.panes.runs import RunsPane
from console.panes.work import WorkPane
from console.widgets.footer import Footer


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

    An activation that is no longer the active tab (the first one, delivered late) is ignored, and
    the focus moves at once: `Widget.focus` moves it later, after a tab shown meanwhile (`2` pressed
    as the console comes up, the first activation handled just before) took it, and pulled it back.
    """
    pane = event.pane
    if event.tabbed_content.active != pane.id:
        return
    tables = pane.query("LiveTable, VirtualTable")
    target = tables.first() if tables else next((w for w in pane.query("*") if w.focusable), None)
    if target is not None:
        pane.screen.set_focus(target)


class MainScreen(Screen[None]):
    AUTO_FOCUS = "#work-table"
    """Focused as the screen is composed, before it is first drawn (Textual's default, the first focusable
    widget, is the tabs: a focus, footer keys and a frame more on the way to the table)."""

    def __init__(
        self,
        permissions: Permissions,
        clock: Callable[[], datetime],
        endpoint: EndpointInfo | None,
        extra_panes: Sequence[ExtraPane],
        fill: Callable[[], None] = lambda: None,
    ) -> None:
        """`fill`: what the app puts in as the screen mounts (the first page of the queue, read already)."""
        super().__init__(id="main")
        self.permissions = permissions
        self.clock = clock
        self.endpoint = endpoint
        self.extra_panes = list(extra_panes)
        self._built = {"work"}
        self._building = {"work"}
        self._fill = fill
        self._resumed = False

    def compose(self) -> ComposeResult:
        """The work queue; every other tab's content is built when first shown."""
        yield Static("", id="status")
        with TabbedContent(id="tabs", initial="work"):
            with TabPane("Work", id="work"):
                yield WorkPane(self.permissions, self.clock, id="work-pane")
            yield TabPane("Runs", id="runs")
            yield TabPane("Processes", id="processes")
            if self.endpoint is not None:
                yield TabPane("Endpoint", id="endpoint")
            for pane in self.extra_panes:
                yield TabPane(pane.title, id=pane.id)
            yield TabPane("Activity", id="activity")
        yield Static("", id="notice", classes="notice-line")
        yield Footer()

    async def on_mount(self) -> None:
        """Before the screen is first laid out (it handles nothing else until this returns): what the app
        puts in, then the footer's keys, for the table focused as the screen was composed, so that the
        first frame is whole instead of drawn again with the rows, then with the keys."""
        self._fill()
        await self.query_one(Footer).show_keys()

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Shown the first time, just mounted: its widgets were styled as they mounted (the theme was
        set before), and Textual's restyle of every one on a resume would change nothing and delay the
        first frame."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def on_resize(self, event: events.Resize) -> None:
        """The resize Textual sends a screen after its first layout (it is among the widgets newly shown)
        would lay it out again, right after the first frame, at the size it was laid out at: skipped.
        A resize of the terminal comes with another size."""
        if event.size == self.region.size:
            event.prevent_default()

    def _content(self, tab: str) -> Widget:
        if tab == "runs":
            return RunsPane(self.permissions, id="runs-pane")
        if tab == "processes":
            return ProcessesPane(self.permissions, id="processes-pane")
        if tab == "activity":
            return ActivityPane(id="activity-pane")
        if tab == "endpoint" and self.endpoint is not None:
            return VerticalScroll(Static(endpoint_text(self.endpoint), id="endpoint-text"), can_focus=True)
        return next(pane.build() for pane in self.extra_panes if pane.id == tab)

    def built(self, tab: str) -> bool:
        """Whether the tab's content is there (it is built when the tab is first shown)."""
        return tab in self._built

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
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active != tab:
            # focus left in the tab being hidden would not stay there: Textual moves it to a sibling in
            # that tab, whose pane then asks for its tab back (`2` pressed as the console comes up
            # would show the work queue again); the tab shown takes the focus (`focus_into`)
            self.set_focus(None)
        tabs.active = tab

    @on(TabbedContent.TabActivated, "#tabs")
    async def _shown(self, event: TabbedContent.TabActivated) -> None:
        """A tab shown for the first time is built (the app, which the event reaches next, fills it)."""
        if str(event.pane.id) not in self._building:
            self.set_focus(None)  # focus left in the tab now hidden would pull it back while this builds
            await self.build(str(event.pane.id))
        focus_into(event)

    async def build(self, tab: str) -> None:
        """Build the tab's content, once."""
        if tab in self._building:
            return
        self._building.add(tab)
        await self.query_one(f"#{tab}", TabPane).mount(self._content(tab))
        self._built.add(tab)

    async def build_extra_panes(self) -> None:
        """The tabs other parts of the product add, once the first screen is up: they may tell the
        operator things while hidden (the demo's story cues its acts from its tab)."""
        for pane in self.extra_panes:
            await self.build(pane.id)

    def set_status(self, text: Text) -> None:
        for status in self.query("#status").results(Static):  # none once the console is closing
            status.update(text, layout=False)  # one line: no layout
