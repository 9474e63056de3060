"""The action registry: every action has a unique id, a known scope and a handler, and write and
capability actions are hidden where they do not apply."""

from __future__ import annotations

from textual.binding import Binding

from console.client.base import Capabilities
from console.keys.registry import ACTIONS, SCOPE_TITLES, allowed, bindings
from console.modals.decide import Confirm, DecisionSet


def test_every_action_has_a_unique_id_a_known_scope_and_a_handler() -> None:
    from console.app import ApcApp
    from console.keys.commands import RegistryCommands
    from console.modals.common import Dialog
    from console.panes.evidence import EvidencePane
    from console.panes.processes import ProcessesPane
    from console.panes.runs import RunsPane
    from console.panes.work import WorkPane
    from console.screens.run import RunScreen
    from console.widgets.scroll_pane import ScrollPane
    from console.widgets.virtual_table import VirtualTable

    handlers = {
        "app": ApcApp,
        "table": VirtualTable,
        "work": WorkPane,
        "runs": RunsPane,
        "processes": ProcessesPane,
        "run": RunScreen,
        "evidence": EvidencePane,
        "modal": Dialog,
        "decide": DecisionSet,
        "confirm": Confirm,
        "scroll": ScrollPane,
    }
    assert len({spec.id for spec in ACTIONS}) == len(ACTIONS)
    assert set(SCOPE_TITLES) == set(handlers)
    for spec in ACTIONS:
        name = spec.action.split("(")[0]
        assert hasattr(handlers[spec.scope], f"action_{name}"), spec.id
        assert spec.id.startswith(f"{spec.scope}."), spec.id
    for scope in handlers:
        # The confirmation line holds focus while it asks, so its y/n answer before the app's keys.
        shared = (scope,) if scope == "confirm" else (scope, "app")
        keys = [key for spec in ACTIONS if spec.scope in shared for key in spec.keys.split(",")]
        assert len(keys) == len(set(keys)), scope
    assert RegistryCommands is not None
    work = {b.id: (b.key, b.description, b.tooltip) for b in bindings("work") if isinstance(b, Binding)}
    assert work["work.decide"] == ("enter,d", "Decide", "Open the decision form")


def test_write_and_capability_actions_are_hidden_where_they_do_not_apply() -> None:
    by_id = {spec.id: spec for spec in ACTIONS}
    embedded = Capabilities(publish=True, switch_identity=True, process_document=True)
    assert allowed(by_id["runs.cancel"], read_only=False, capabilities=Capabilities())
    assert not allowed(by_id["runs.cancel"], read_only=True, capabilities=embedded)
    assert not allowed(by_id["app.publish"], read_only=False, capabilities=Capabilities())
    assert allowed(by_id["app.publish"], read_only=False, capabilities=embedded)
    assert allowed(by_id["app.identity"], read_only=True, capabilities=embedded)
