"""The console's view of the demo agents: who they are, what each holds, what each did last; pause,
resume and speed them up or down from the keyboard.

The pane reads `DemoControl` on a short interval and redraws only when an agent reported something.
It takes no protocol action itself: the agents act over MCP like any other agent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from console.actions import ActionSpec
from console.demo.control import AgentState, DemoControl
from console.widgets.live_table import Column, LiveTable

REFRESH_SECONDS = 0.5
SCOPE = "demo"
DEMO_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "demo.toggle", "space", "toggle_agent", "Pause/resume", SCOPE, "Pause or resume the selected agent"
    ),
    ActionSpec("demo.all", "a", "toggle_all", "All", SCOPE, "Pause every agent, or resume them all"),
    ActionSpec(
        "demo.faster", "plus,equals_sign", "faster", "Faster", SCOPE, "The selected agent works twice as fast"
    ),
    ActionSpec("demo.slower", "minus", "slower", "Slower", SCOPE, "The selected agent works half as fast"),
)
"""The pane's keys, in the registry's shape, so the console can list them in its help."""

_KEY_SIGNS = {"plus": "+", "minus": "-"}

COLUMNS = (
    Column("agent", "Agent", 10),
    Column("status", "Status", 8),
    Column("holds", "Holds", 46),
    Column("speed", "Speed", 6),
    Column("done", "Sub/Esc/Lap", 11),
    Column("last", "Last action", 56),
)


def agent_cells(state: AgentState) -> list[Text]:
    status_style = {"paused": "yellow", "error": "red", "working": "green"}.get(state.status, "")
    return [
        Text(state.name),
        Text(state.status, style=status_style),
        Text(state.holding or "—"),
        Text(f"{state.speed:g}x"),
        Text(f"{state.submitted}/{state.escalated}/{state.lapsed}"),
        Text(state.last_action),
    ]


class DemoPane(Vertical):
    SCOPE = SCOPE
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            s.keys,
            s.action,
            s.description,
            key_display=_KEY_SIGNS.get(s.key_display, s.key_display),
            tooltip=s.help,
            id=s.id,
        )
        for s in DEMO_ACTIONS
    ]

    def __init__(
        self, control: DemoControl, *, status: Callable[[], str] | None = None, id: str | None = "demo-pane"
    ) -> None:
        super().__init__(id=id)
        self.control = control
        self._status = status
        self._seen = -1

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="demo-status")
        yield LiveTable(COLUMNS, id="demo-agents")

    def on_mount(self) -> None:
        self.refresh_rows(force=True)
        self.set_interval(REFRESH_SECONDS, self.refresh_rows)

    @property
    def table(self) -> LiveTable:
        return self.query_one("#demo-agents", LiveTable)

    def refresh_rows(self, *, force: bool = False) -> None:
        if self._status is not None:
            self.query_one("#demo-status", Static).update(Text(self._status()))
        version = self.control.version
        if version == self._seen and not force:
            return
        self._seen = version
        self.table.sync([(state.name, agent_cells(state)) for state in self.control.agents])

    def _selected(self) -> str | None:
        return self.table.current_key

    def action_toggle_agent(self) -> None:
        if (name := self._selected()) is not None:
            self.control.toggle(name)
            self.refresh_rows()

    def action_toggle_all(self) -> None:
        if all(state.paused for state in self.control.agents):
            self.control.resume()
        else:
            self.control.pause()
        self.refresh_rows()

    def action_faster(self) -> None:
        if (name := self._selected()) is not None:
            self.control.faster(name)
            self.refresh_rows()

    def action_slower(self) -> None:
        if (name := self._selected()) is not None:
            self.control.slower(name)
            self.refresh_rows()
