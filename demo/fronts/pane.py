"""The Demo agents tab: each demo agent as the server knows it (the identity its own bearer token
gives it), the step it works on and its last call with the answer, so an audience sees that the
agents are real MCP clients; the demo clock and, with a story, what it did and what is your turn.

The pane reads the presenter's status on a short interval (in-process, or over `apc_demo_control`
in a browser tab) and redraws only what changed, and only while its tab is shown (once more when it
is shown again). `space` pauses or resumes the selected agent; the rest of the presenter's controls
are the console's own keys. A story's cue is also shown as a toast once, when it is first due, the
tab shown or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import Static

from console import messages
from console.keys.registry import ActionSpec
from console.widgets.live_table import Column, LiveTable
from demo.stories.presenter import ConsolePresenter

REFRESH_SECONDS = 0.5
SCOPE = "demo"
DEMO_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "demo.toggle", "space", "toggle_agent", "Pause/resume", SCOPE, "Pause or resume the selected agent"
    ),
)
"""The pane's keys, in the registry's shape, so the console can list them in its help."""

COLUMNS = (
    Column("agent", "Agent", 10),
    Column("identity", "Token identity", 30),
    Column("status", "Status", 8),
    Column("step", "Current step", 44),
    Column("call", "Last call", 36),
    Column("done", "Sub/Esc/Lap", 11),
)


def agent_cells(row: Mapping[str, Any]) -> list[Text]:
    status = str(row["status"])
    status_style = {"paused": "yellow", "error": "red", "working": "green"}.get(status, "")
    return [
        Text(str(row["name"])),
        Text(str(row["identity"])),
        Text(status, style=status_style),
        Text(str(row["step"])),
        Text(str(row["lastCall"])),
        Text(f"{row['submitted']}/{row['escalated']}/{row['lapsed']}"),
    ]


def status_text(status: Mapping[str, Any]) -> Text:
    text = Text(f"demo clock {status['speed']:g}x · {status['now']}", end="")
    if status["paused"]:
        text.append(" · PAUSED", "bold yellow")
    text.append(f" · {status['line']}")
    if status["left"]:
        text.append(f" · left to you: {', '.join(status['left'])}")
    return text


def story_text(story: Mapping[str, Any] | None) -> Text:
    if story is None:
        return Text("")
    text = Text(f"story {story['name']}: {story['title']} (as the {story['user']}) · ", end="")
    text.append(f"{story['done']}/{story['moments']} moments", "bold")
    for cue in story["cues"]:
        text.append(f"\nyour turn: {cue}", "bold")
    for line in story["log"][-6:]:
        text.append(f"\n{line}", "dim")
    return text


class DemoPane(Vertical):
    SCOPE = SCOPE
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(s.keys, s.action, s.description, key_display=s.key_display, tooltip=s.help, id=s.id)
        for s in DEMO_ACTIONS
    ]

    def __init__(self, presenter: ConsolePresenter, *, id: str | None = "demo-pane") -> None:
        super().__init__(id=id)
        self.presenter = presenter
        self._shown: Mapping[str, Any] | None = None
        self._cued: set[str] = set()

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="demo-status")
        yield LiveTable(COLUMNS, id="demo-agents")
        yield Static(Text(""), id="demo-story")

    def on_mount(self) -> None:
        self.run_worker(self.refresh_rows(), group="demo-status")
        self.set_interval(REFRESH_SECONDS, self._tick)

    def _tick(self) -> None:
        self.run_worker(self.refresh_rows(), group="demo-status", exclusive=True)

    @property
    def table(self) -> LiveTable:
        return self.query_one("#demo-agents", LiveTable)

    async def refresh_rows(self) -> None:
        status = await self.presenter.status()
        if status is None:
            return
        for cue in (status["story"] or {}).get("cues", []):
            if cue not in self._cued:
                self._cued.add(cue)
                self.post_message(messages.Notice(f"Your turn: {cue}"))
        if self._tab_shown():
            self._draw(status)

    def on_show(self) -> None:
        if self.presenter.last is not None:
            self._draw(self.presenter.last)

    def _tab_shown(self) -> bool:
        """Whether the pane's tab is the one shown (`is_on_screen` would lay the screen out to know)."""
        return all(node.display for node in self.ancestors_with_self)

    def _draw(self, status: Mapping[str, Any]) -> None:
        if status == self._shown:
            return
        try:
            line = self.query_one("#demo-status", Static)
        except NoMatches:  # a read that ends after the console began to close (its parts go first)
            return
        self._shown = status
        line.update(status_text(status))
        self.table.sync([(str(row["name"]), agent_cells(row)) for row in status["agents"]])
        self.query_one("#demo-story", Static).update(story_text(status["story"]))

    async def action_toggle_agent(self) -> None:
        name = self.table.current_key
        if name is None:
            return
        ok, message = await self.presenter.control("agent", {"name": name})
        self.post_message(messages.Notice(message, severity="information" if ok else "error"))
        await self.refresh_rows()
