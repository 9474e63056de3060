"""Importing a process (spec §7): the group for every role the document names, what it `requires`,
and publication only when the operator confirms."""

from __future__ import annotations

import re
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Button, Input, Label, Static

from console.modals.common import Dialog
from engine.document.model import Process


def role_input_id(role: str) -> str:
    return "role-" + re.sub(r"[^A-Za-z0-9_-]", "_", role)


def requires_lines(process: Process) -> list[str]:
    systems = process.requires_systems
    if not systems:
        return ["requires: nothing named"]
    return ["requires these systems (the process grants nothing in them):", *(f"  • {s}" for s in systems)]


class PublishDialog(Dialog[dict[str, str]]):
    """Dismisses with the binding, role to group, once the operator confirms; None when closed."""

    def __init__(self, source: Path, process: Process) -> None:
        super().__init__(f"Publish {process.name} from {source}", id="publish")
        self.source = source
        self.process = process

    def compose_body(self) -> ComposeResult:
        process = self.process
        with VerticalScroll(classes="answer"):
            yield Static(Text(f"{process.name} · {process.description}", style="bold"))
            yield Static(Text("\n".join(requires_lines(process))), id="requires")
            if process.roles:
                yield Label(Text("the group that does each role's steps", style="bold"))
            else:
                yield Static(Text("No person steps: nothing to bind.", style="dim"))
            for role in process.roles:
                yield Label(Text(role))
                yield Input(role, placeholder=f"group for {role}", id=role_input_id(role), compact=True)
            yield Static("", id="problem", classes="problem")

    def compose_buttons(self) -> ComposeResult:
        yield Button("Publish", id="submit", variant="primary", compact=True)
        yield Button("Back", id="close", compact=True)

    def binding(self) -> tuple[dict[str, str], list[str]]:
        bind: dict[str, str] = {}
        issues: list[str] = []
        for role in self.process.roles:
            group = self.query_one(f"#{role_input_id(role)}", Input).value.strip()
            if group:
                bind[role] = group
            else:
                issues.append(f"{role}: a group is required")
        return bind, issues

    async def action_submit(self) -> None:
        bind, issues = self.binding()
        if issues:
            self.query_one("#problem", Static).update(Text("\n".join(issues)))
            return
        self.dismiss(bind)
