"""Send an event to a run (spec §3.6): a name, and optional JSON object data."""

from __future__ import annotations

import json
import re

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Button, Input, Label, Static, TextArea

from console.client.wire import Json, Run
from console.modals.common import Dialog

EVENT_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}\Z")
"""Event names match the step id pattern and compare exactly."""


Event = tuple[str, dict[str, Json] | None]
"""An event's name and its data, if any."""


def parse_event(name: str, data_text: str) -> tuple[Event | None, list[str]]:
    issues: list[str] = []
    if not EVENT_NAME.match(name):
        issues.append("name: lowercase letters, digits, '_' or '-', starting with a letter (at most 64)")
    data: dict[str, Json] | None = None
    if data_text.strip():
        try:
            parsed = json.loads(data_text)
        except json.JSONDecodeError as exc:
            issues.append(f"data: not valid JSON ({exc.msg} at line {exc.lineno})")
        else:
            if isinstance(parsed, dict):
                data = parsed
            else:
                issues.append("data: expected a JSON object")
    return (None if issues else (name, data)), issues


class EventDialog(Dialog[Event]):
    def __init__(self, run: Run, waiting_for: list[str]) -> None:
        super().__init__(f"Send an event to run {run['id']} ({run['process']})", id="send-event")
        self.waiting_for = waiting_for

    def compose_body(self) -> ComposeResult:
        waits = (
            ", ".join(self.waiting_for)
            if self.waiting_for
            else "no wait_for step is ready; the event is held"
        )
        yield Static(Text(f"waiting for: {waits}", style="dim"))
        yield Input(
            self.waiting_for[0] if len(self.waiting_for) == 1 else "",
            placeholder="event name",
            id="event-name",
        )
        yield Label(Text("data (a JSON object, optional)", style="bold"))
        yield TextArea("", id="event-data", soft_wrap=True)
        yield Static("", id="problem", classes="problem")

    def compose_buttons(self) -> ComposeResult:
        yield Button("Send", id="submit", variant="primary", compact=True)
        yield Button("Close", id="close", compact=True)

    async def action_submit(self) -> None:
        parsed, issues = parse_event(
            self.query_one("#event-name", Input).value.strip(), self.query_one("#event-data", TextArea).text
        )
        if parsed is None:
            self.query_one("#problem", Static).update(Text("\n".join(issues)))
            return
        self.dismiss(parsed)
