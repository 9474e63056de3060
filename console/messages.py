"""What panes, screens and dialogs ask of the app: each posts one of these, the app handles it with
`@on` and hands the work to a flow (`console.flows`). Data goes down as arguments; requests come up
as messages, so a pane never reaches into the app and can be mounted and tested in a bare `App`.

To add a request: a class here (named for what is asked, with what it needs to be done), a post in
the pane, a `@on` handler in `ApcApp` that calls the flow in `console.flows`.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.message import Message
from textual.notifications import SeverityLevel

from console.client.wire import PersonWorkEntry, ProcessSummary, Run, RunSummary, RunView
from console.live.paging import Window


class ConsoleMessage(Message):
    """Every request to the app; a test app can record them all by handling this one."""


class OpenRun(ConsoleMessage):
    """Show this run in full."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id


class FindRun(ConsoleMessage):
    """A whole run id typed in the runs search: open that run when the server has it, loaded or not."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id


class DecideRequested(ConsoleMessage):
    """Open the decision form for this work item (in `get_work` shape)."""

    def __init__(self, entry: PersonWorkEntry) -> None:
        super().__init__()
        self.entry = entry


class DecideInRunRequested(ConsoleMessage):
    """Decide in this run: the caller's item at `step_id`, their only one, or ask which."""

    def __init__(self, run_id: str, step_id: str | None) -> None:
        super().__init__()
        self.run_id = run_id
        self.step_id = step_id


class CancelRequested(ConsoleMessage):
    """Ask for the reason, then cancel each of these runs."""

    def __init__(self, runs: Sequence[Run | RunSummary]) -> None:
        super().__init__()
        self.runs = tuple(runs)


class EventRequested(ConsoleMessage):
    """Ask for an event's name and data, then send it to this run."""

    def __init__(self, view: RunView) -> None:
        super().__init__()
        self.view = view


class StartRunRequested(ConsoleMessage):
    """Open the inputs form to start a run of this process."""

    def __init__(self, process: ProcessSummary) -> None:
        super().__init__()
        self.process = process


class RefreshRequested(ConsoleMessage):
    """Read what is on screen again now (a filter changed, another page is wanted)."""


class RowsWanted(ConsoleMessage):
    """A paged list (`work` or `runs`) needs rows first..last read, or (`to_end`) every row there is."""

    def __init__(self, source: str, window: Window, *, to_end: bool = False) -> None:
        super().__init__()
        self.source = source
        self.window = window
        self.to_end = to_end


class Notice(ConsoleMessage):
    """Tell the operator something, on the status line and in the activity log. `live` notices come
    from the refresh (new work, a run ended); notices of one `group` close together are counted as one
    (`5 new work items`), `count` saying how many this one stands for."""

    def __init__(
        self,
        text: str,
        *,
        severity: SeverityLevel = "information",
        live: bool = False,
        group: str | None = None,
        count: int = 1,
    ) -> None:
        super().__init__()
        self.text = text
        self.severity: SeverityLevel = severity
        self.live = live
        self.group = group
        self.count = count


class ViewTextRequested(ConsoleMessage):
    """Show this text (an evidence file) in a viewer."""

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title = title
        self.text = text


class SaveFileRequested(ConsoleMessage):
    """Ask where to save these bytes (an evidence file), then write them there."""

    def __init__(self, name: str, content: bytes) -> None:
        super().__init__()
        self.name = name
        self.content = content


class CopyRequested(ConsoleMessage):
    """Put this text on the clipboard."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
