"""The help screen: the keys of the focused pane first, then everything that works everywhere, all read
from the action registry."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from console.keys.commands import focus_chain
from console.keys.registry import SCOPE_TITLES, ActionSpec, specs
from console.modals.common import Dialog


class HelpDialog(Dialog[None]):
    """Keys for the focused pane first, then everything that works everywhere."""

    def __init__(self, screen: Screen[object]) -> None:
        chain = [scope for scope, _ in focus_chain(screen)]
        panes = [scope for scope in chain if scope not in ("table", "app")]
        super().__init__(f"Help: {SCOPE_TITLES[panes[0]] if panes else 'the console'}", id="help")
        self.scopes = list(dict.fromkeys([*panes, *chain, "app"]))

    def compose_body(self) -> ComposeResult:
        text = Text(end="")
        for scope in self.scopes:
            found = specs(scope)
            if not found:
                continue
            text.append(f"{SCOPE_TITLES.get(scope, scope)}\n", "bold")
            for spec in found:
                keys = ", ".join(_key(k) for k in spec.keys.split(","))
                text.append(f"  {keys:<14}", "bold")
                text.append(f"{spec.description}: {spec.help}\n")
            text.append("\n")
        with VerticalScroll(classes="answer"):
            yield Static(text, id="help-text")


def _key(name: str) -> str:
    return ActionSpec("", name, "", "", "").key_display
