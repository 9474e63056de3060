"""The command palette, read from the action registry.

What is offered depends on focus: the scopes of the focused widget and its ancestors, then the app,
each action asked through `check_action`, so nothing hidden in the footer appears here either.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.actions import parse
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

from console.keys.registry import SCOPE_TITLES, ActionSpec, specs
from console.keys.scoped import scope_of


def focus_chain(screen: Screen[object]) -> list[tuple[str, DOMNode]]:
    """The focused widget, its ancestors up to the screen, then the app, each with the scope it handles."""
    start = screen.focused or screen
    nodes: list[DOMNode] = [start, *start.ancestors]
    return [(scope, node) for node in nodes if (scope := scope_of(node)) is not None]


def available(screen: Screen[object]) -> Iterator[tuple[ActionSpec, DOMNode]]:
    seen: set[str] = set()
    for scope, node in focus_chain(screen):
        for spec in specs(scope):
            if spec.id in seen or spec.action in ("command_palette", "help"):
                continue
            seen.add(spec.id)
            _, name, parameters = parse(spec.action)
            if node.check_action(name, parameters) is True:
                yield spec, node


async def _run(node: DOMNode, action: str) -> None:
    await node.app.run_action(action, node)


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
