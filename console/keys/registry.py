"""Every key binding of the console, defined once: the footer, the help screen and the command palette
all read this registry, so a binding cannot be documented in one place and different in another.

An action belongs to a scope: the widget class that handles it declares `SCOPE` and takes its
`BINDINGS` from here. `write` actions disappear in read-only mode; `needs` names a capability that
only some connections offer (publishing, switching identity), and without it the action is hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.binding import BindingType

    from console.client.base import Capabilities


@dataclass(frozen=True)
class ActionSpec:
    id: str
    keys: str
    """Textual key names, comma separated; the first is the one shown."""
    action: str
    description: str
    scope: str
    help: str = ""
    write: bool = False
    needs: str | None = None
    show: bool = True
    bound: bool = True
    """False when Textual itself binds the key (the command palette): documented here, bound there."""

    @property
    def key_display(self) -> str:
        first = self.keys.split(",")[0]
        return {
            "question_mark": "?",
            "slash": "/",
            "exclamation_mark": "!",
            "space": "space",
            "escape": "esc",
            "enter": "enter",
            "plus": "+",
            "minus": "-",
            "left_square_bracket": "[",
            "right_square_bracket": "]",
        }.get(first, first.replace("ctrl+", "^").upper() if first.startswith("ctrl+") else first)


SCOPE_TITLES = {
    "app": "Everywhere",
    "table": "Tables",
    "work": "Work queue",
    "runs": "Runs",
    "processes": "Processes",
    "run": "Run detail",
    "scroll": "Timeline and map",
    "evidence": "Evidence",
    "modal": "Dialogs",
    "decide": "Decision row",
    "confirm": "Confirmation",
}

ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("app.help", "question_mark,f1", "help", "Help", "app", "Keys for the focused pane"),
    ActionSpec(
        "app.palette", "ctrl+p", "command_palette", "Commands", "app", "Search every action", bound=False
    ),
    ActionSpec("app.work", "1", "show_tab('work')", "Work", "app", "Your open work items", show=False),
    ActionSpec(
        "app.runs", "2", "show_tab('runs')", "Runs", "app", "Every run, filtered and paged", show=False
    ),
    ActionSpec(
        "app.processes", "3", "show_tab('processes')", "Processes", "app", "Published processes", show=False
    ),
    ActionSpec(
        "app.endpoint", "4", "show_tab('endpoint')", "Endpoint", "app", "The local MCP endpoint", show=False
    ),
    ActionSpec(
        "app.activity",
        "5",
        "show_tab('activity')",
        "Activity",
        "app",
        "Every notice of this session",
        show=False,
    ),
    ActionSpec("app.refresh", "r", "refresh_now", "Refresh", "app", "Read everything on screen again now"),
    ActionSpec("app.pause", "p", "toggle_pause", "Pause", "app", "Pause or resume live refresh"),
    ActionSpec(
        "app.start", "n", "start_run", "Start run", "app", "Start a run of a process", write=True, show=False
    ),
    ActionSpec("app.theme", "T", "pick_theme", "Theme", "app", "Choose a colour theme", show=False),
    ActionSpec(
        "app.identity",
        "I",
        "switch_identity",
        "Act as",
        "app",
        "Act as another person",
        needs="switch_identity",
        show=False,
    ),
    ActionSpec(
        "app.publish",
        "P",
        "publish",
        "Publish",
        "app",
        "Publish a process folder",
        write=True,
        needs="publish",
        show=False,
    ),
    ActionSpec("app.quit", "q", "quit", "Quit", "app", "Leave the console"),
    ActionSpec(
        "app.demo_pause",
        "Z",
        "demo_pause",
        "Pause demo",
        "app",
        "Pause or resume the demo world: agents, people, events and the clock (your actions still work)",
        needs="presenter",
    ),
    ActionSpec(
        "app.demo_faster",
        "plus,equals_sign",
        "demo_faster",
        "Faster",
        "app",
        "Run the demo clock twice as fast",
        needs="presenter",
        show=False,
    ),
    ActionSpec(
        "app.demo_slower",
        "minus",
        "demo_slower",
        "Slower",
        "app",
        "Run the demo clock half as fast",
        needs="presenter",
        show=False,
    ),
    ActionSpec(
        "app.demo_leave",
        "L",
        "demo_leave",
        "Leave to me",
        "app",
        "Demo people leave the selected work item (or run) to you, for the whole run; again to give it back",
        needs="presenter",
    ),
    ActionSpec(
        "app.demo_stage",
        "D",
        "demo_stage",
        "Stage",
        "app",
        "Stage a moment now on a fresh run: an escalation, an unsure check, a rework, an overdue item, ...",
        write=True,
        needs="presenter",
    ),
    ActionSpec("table.down", "j", "cursor_down", "Down", "table", "Next row", show=False),
    ActionSpec("table.up", "k", "cursor_up", "Up", "table", "Previous row", show=False),
    ActionSpec("table.top", "g", "scroll_top", "Top", "table", "First row", show=False),
    ActionSpec(
        "table.bottom", "G", "scroll_bottom", "Bottom", "table", "Last row (loads on to the end)", show=False
    ),
    ActionSpec(
        "table.stop",
        "escape",
        "stop_loading",
        "Stop",
        "table",
        "Stop loading rows or a bulk cancel",
        show=False,
    ),
    ActionSpec("work.decide", "enter,d", "decide", "Decide", "work", "Open the decision form", write=True),
    ActionSpec("work.open_run", "o", "open_run", "Open run", "work", "The run of the selected item"),
    ActionSpec("work.filter", "slash", "filter", "Filter", "work", "Filter by text"),
    ActionSpec(
        "work.process", "f", "cycle_process", "Process", "work", "Show one process, or all", show=False
    ),
    ActionSpec("work.kind", "K", "cycle_kind", "Kind", "work", "Show one kind of item, or all", show=False),
    ActionSpec(
        "work.overdue",
        "exclamation_mark",
        "toggle_overdue",
        "Overdue",
        "work",
        "Only overdue items",
        show=False,
    ),
    ActionSpec("work.sort", "s", "cycle_sort", "Sort", "work", "Sort by age or by due"),
    ActionSpec("runs.open", "enter,o", "open_run", "Open", "runs", "Open the selected run"),
    ActionSpec(
        "runs.filter",
        "slash",
        "filter",
        "Search",
        "runs",
        "Search a run id (a whole one opens the run) or process; then state, input field=value",
    ),
    ActionSpec("runs.mark", "space", "toggle_mark", "Mark", "runs", "Mark the run for a bulk cancel"),
    ActionSpec("runs.unmark", "U", "clear_marks", "Unmark all", "runs", "Clear every mark", show=False),
    ActionSpec("runs.cancel", "x", "cancel_run", "Cancel", "runs", "Cancel the selected run", write=True),
    ActionSpec(
        "runs.bulk_cancel", "X", "bulk_cancel", "Cancel marked", "runs", "Cancel every marked run", write=True
    ),
    ActionSpec("runs.more", "m", "load_more", "More", "runs", "Load the next page of runs"),
    ActionSpec(
        "processes.start", "enter,s", "start_selected", "Start", "processes", "Start a run", write=True
    ),
    ActionSpec("run.decide", "d", "decide", "Decide", "run", "Decide this run's open work item", write=True),
    ActionSpec("run.cancel", "x", "cancel_run", "Cancel", "run", "Cancel this run", write=True),
    ActionSpec("run.event", "e", "send_event", "Event", "run", "Send an event to this run", write=True),
    ActionSpec("run.map", "M", "show_map", "Map", "run", "The process map"),
    ActionSpec(
        "run.next_tab",
        "right_square_bracket,l",
        "next_tab",
        "Next tab",
        "run",
        "The tab to the right",
        show=False,
    ),
    ActionSpec(
        "run.prev_tab",
        "left_square_bracket,h",
        "prev_tab",
        "Previous tab",
        "run",
        "The tab to the left",
        show=False,
    ),
    ActionSpec("scroll.down", "j", "scroll_down", "Down", "scroll", "Scroll down a line", show=False),
    ActionSpec("scroll.up", "k", "scroll_up", "Up", "scroll", "Scroll up a line", show=False),
    ActionSpec("run.back", "escape", "close", "Back", "run", "Back to the list"),
    ActionSpec("evidence.view", "enter,v", "view_file", "View", "evidence", "Open a text file in a viewer"),
    ActionSpec("evidence.save", "S", "save_file", "Save", "evidence", "Save the file to a path"),
    ActionSpec("evidence.copy", "c", "copy_url", "Copy URL", "evidence", "Copy the file's URL or the link"),
    ActionSpec("evidence.stop", "escape", "stop_reading", "Stop", "evidence", "Stop reading files back"),
    ActionSpec("modal.submit", "ctrl+s", "submit", "Submit", "modal", "Send the form"),
    ActionSpec("modal.close", "escape", "close", "Close", "modal", "Close without sending"),
    ActionSpec(
        "decide.approve", "a", "choose('approved')", "Approve", "decide", "Choose approve", show=False
    ),
    ActionSpec("decide.reject", "x", "choose('rejected')", "Reject", "decide", "Choose reject", show=False),
    ActionSpec(
        "decide.complete", "c", "choose('completed')", "Complete", "decide", "Choose complete", show=False
    ),
    ActionSpec(
        "decide.return",
        "b",
        "choose('returned')",
        "Return",
        "decide",
        "Choose return (send back)",
        show=False,
    ),
    ActionSpec("decide.fail", "f", "choose('failed')", "Fail", "decide", "Choose fail", show=False),
    ActionSpec("confirm.yes", "y", "confirm_yes", "Yes", "confirm", "Send the decision as named"),
    ActionSpec("confirm.no", "n,escape", "confirm_no", "No", "confirm", "Back to the form, nothing sent"),
)

_BY_SCOPE_ACTION = {(spec.scope, spec.action): spec for spec in ACTIONS}


def specs(*scopes: str) -> list[ActionSpec]:
    return [spec for spec in ACTIONS if spec.scope in scopes]


def find(scope: str, action: str) -> ActionSpec | None:
    return _BY_SCOPE_ACTION.get((scope, action))


def bindings(scope: str) -> list[BindingType]:
    """The Textual bindings of one scope, each carrying its registry id and help as tooltip."""
    from textual.binding import Binding

    found: list[BindingType] = [
        Binding(
            spec.keys,
            spec.action,
            spec.description,
            show=spec.show,
            key_display=spec.key_display,
            tooltip=spec.help,
            id=spec.id,
        )
        for spec in specs(scope)
        if spec.bound
    ]
    return found


def allowed(spec: ActionSpec, *, read_only: bool, capabilities: Capabilities) -> bool:
    if spec.write and read_only:
        return False
    return spec.needs is None or bool(getattr(capabilities, spec.needs, False))
