"""The command palette and the help screen, both read from the action registry.

What is offered depends on focus: the scopes of the focused widget and its ancestors, then the app,
each action asked through `check_action`, so nothing hidden in the footer appears here either.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from rich.text import Text
from textual.actions import parse
from textual.app import ComposeResult
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Static

from console.actions import SCOPE_TITLES, ActionSpec, specs
from console.modals.common import Dialog


def focus_chain(screen: Screen[object]) -> list[DOMNode]:
    """The focused widget, its ancestors up to the screen, then the app: where actions are handled."""
    start = screen.focused or screen
    nodes: list[DOMNode] = [start, *start.ancestors]
    return [node for node in nodes if hasattr(node, "SCOPE")]


def available(screen: Screen[object]) -> Iterator[tuple[ActionSpec, DOMNode]]:
    seen: set[str] = set()
    for node in focus_chain(screen):
        for spec in specs(node.SCOPE):  # type: ignore[attr-defined]
            if spec.id in seen or spec.action in ("command_palette", "help"):
                continue
            seen.add(spec.id)
            _, name, parameters = parse(spec.action)
            if node.check_action(name, parameters) is True:
                yield spec, node


async def _run(node: DOMNode, action: str) -> None:
    await node.run_action(action)


class RegistryCommands(Provider):
    async def discover(self) -> Hits:
        for spec, node in available(self.screen):
            yield DiscoveryHit(
                spec.description, partial(_run, node, spec.action), help=f"{spec.key_display} · {spec.help}"
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for spec, node in available(self.screen):
            label = f"{spec.description}: {spec.help}"
            score = matcher.match(label)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(label),
                    partial(_run, node, spec.action),
                    help=f"key {spec.key_display} · {SCOPE_TITLES.get(spec.scope, spec.scope)}",
                )


class HelpDialog(Dialog[None]):
    """Keys for the focused pane first, then everything that works everywhere."""

    def __init__(self, screen: Screen[object]) -> None:
        chain = [node.SCOPE for node in focus_chain(screen)]  # type: ignore[attr-defined]
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
