"""The operator console: one Textual app over one `Client`, embedded or remote.

The app owns the connection, the theme and the live refresh (an interval that can be paused, reading
the work queue, the runs list and any open run); the flows that span screens are in `flows.py`.
Panes only render what they are given and call back here for actions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.timer import Timer

from console.actions import bindings
from console.answer import answer_summary
from console.checks import bar_for, step_bars
from console.client.base import Capabilities, Client
from console.client.envelope import Envelope, error_code, error_message
from console.client.paging import PAGE, all_pages, run_updates
from console.commands import HelpDialog, RegistryCommands
from console.config import ConsoleConfig
from console.flows import Flows
from console.modals.common import AnswerDialog
from console.palette import Palette
from console.scoped import Scoped
from console.screens.main import EndpointInfo, ExtraPane, MainScreen
from console.screens.run_detail import RunScreen
from console.themes import DEFAULT_THEME, LoadedThemes, load_themes
from console.views import BarOf
from engine.clock import Clock
from engine.document.model import Process

LIVE_TOAST_SECONDS = 3.0
"""Live notices come often on a busy server; they leave quicker than answers to the operator's actions."""


@dataclass
class Session:
    """A connection ready to use, and what the console shows about it."""

    client: Client
    where: str
    """`embedded · <data dir>` or `remote · <url>`, for the status line."""
    clock: Clock | None = None
    endpoint: EndpointInfo | None = None
    close: Callable[[], Awaitable[None]] | None = None
    notices: list[str] = field(default_factory=list)
    """Shown as toasts once the console is up (what start-up published or refused)."""


Opener = Callable[[], Awaitable[Session]]


class ApcApp(Flows, Scoped, App[None]):
    SCOPE = "app"
    CSS_PATH = "app.tcss"
    TITLE = "apc"
    BINDINGS = bindings("app")
    COMMANDS = App.COMMANDS | {RegistryCommands}

    def __init__(
        self,
        session: Session | Opener,
        *,
        read_only: bool = False,
        config: ConsoleConfig | None = None,
        themes: LoadedThemes | None = None,
        live: bool = True,
        cursor_blink: bool = True,
        extra_panes: Sequence[ExtraPane] = (),
    ) -> None:
        super().__init__()
        self._opener: Opener | None = None if isinstance(session, Session) else session
        self.session: Session | None = session if isinstance(session, Session) else None
        self.read_only = read_only
        self.config = config or ConsoleConfig()
        self.loaded_themes = themes or load_themes()
        self.live = live
        self.cursor_blink = cursor_blink
        self.extra_panes = list(extra_panes)
        self.paused = False
        self.toasts: list[str] = []
        """Every toast shown, in order: what an operator was told, kept for tests and the log."""
        self.ready = asyncio.Event()
        self.palette = Palette()
        self.last_now = datetime.fromtimestamp(0, UTC)
        self.last_refresh: datetime | None = None
        self._documents: dict[tuple[str, int], Process | None] = {}
        self._limits: dict[str, Any] | None = None
        self._timer: Timer | None = None
        self._last_error = ""

    # connection

    @property
    def client(self) -> Client:
        assert self.session is not None, "the console is not connected yet"
        return self.session.client

    @property
    def capabilities(self) -> Capabilities:
        return self.session.client.capabilities if self.session is not None else Capabilities()

    @property
    def main(self) -> MainScreen:
        return self.get_screen("main")  # type: ignore[return-value]

    def now(self) -> datetime:
        clock = self.session.clock if self.session is not None else None
        return clock.now() if clock is not None else datetime.now(UTC)

    async def on_mount(self) -> None:
        for theme in self.loaded_themes.themes:
            self.register_theme(theme)
        wanted = self.config.theme or DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        self.palette = self._theme_palette()
        for problem in self.loaded_themes.problems:
            self.toast(f"theme not loaded: {problem}", severity="warning")
        self.run_worker(self._start(), name="start", exit_on_error=True)

    async def _start(self) -> None:
        if self.session is None and self._opener is not None:
            self.session = await self._opener()
        assert self.session is not None
        endpoint = self.session.endpoint
        self.install_screen(MainScreen(endpoint, self.extra_panes), name="main")
        await self.push_screen("main")
        for notice in self.session.notices:
            self.toast(notice, severity="warning" if notice.startswith("Not published") else "information")
        await self.reload_all()
        if self.live:
            self._timer = self.set_interval(self.config.refresh_seconds, self._tick)
        self.call_after_refresh(self.ready.set)

    async def on_unmount(self) -> None:
        if self.session is not None and self.session.close is not None:
            await self.session.close()

    def _theme_palette(self) -> Palette:
        return Palette.from_theme(self.current_theme)

    def watch_theme(self, theme: str) -> None:
        self.palette = self._theme_palette()
        if theme != self.config.theme and self.ready.is_set():
            self.config = self.config.with_theme(theme)
            self.config.save()
        if self.ready.is_set():
            self.repaint()

    def repaint(self) -> None:
        """Redraw what is on screen from what was last read, in the current theme's colours."""
        if not self.is_screen_installed("main"):
            return
        main, now = self.main, self.now()
        main.work.redraw(now, self.palette)
        main.runs.redraw(self.palette)
        self.update_status()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if not self.cursor_blink and hasattr(event.widget, "cursor_blink"):
            event.widget.cursor_blink = False  # type: ignore[attr-defined]

    # live refresh

    def _tick(self) -> None:
        if not self.paused:
            self.reload_soon()

    def reload_soon(self) -> None:
        self.run_worker(self.reload_all(), group="reload", exclusive=True)

    async def reload_all(self) -> None:
        """Read what is on screen again: the work queue always (for its toasts), the runs, an open run."""
        if self.session is None or not self.is_screen_installed("main"):
            return
        now = self.now()
        main = self.main
        work, _, work_error = await all_pages(lambda c: self.client.get_work(limit=PAGE, cursor=c))
        updated = await run_updates(self.client)
        if work_error is None:
            main.work.show(work, updated, now, self.palette)
        runs_args, problems = main.runs.query_arguments()
        runs, more, runs_error = await all_pages(
            lambda c: self.client.list_runs(limit=PAGE, cursor=c, **runs_args), max_pages=main.runs.pages
        )
        if runs_error is None:
            main.runs.show(runs, more, self.palette, problems)
        if main.active_tab == "processes" or not main.processes.processes:
            processes, _, error = await all_pages(lambda c: self.client.list_processes(cursor=c))
            if error is None:
                main.processes.show(processes, self.palette)
        if isinstance(self.screen, RunScreen):
            await self.screen.reload()
        self.last_now = now
        self.last_refresh = now
        for source, error in (("work queue", work_error), ("runs", runs_error)):
            if error is not None:
                self.report_error(source, error)
        self.update_status()

    def update_status(self) -> None:
        if self.session is None or not self.is_screen_installed("main"):
            return
        who = self.client.identity
        text = Text(end="")
        text.append(f" {who.id}", "bold")
        text.append(f" ({who.kind}{', operator' if who.operator else ''}) · {self.session.where}")
        if self.read_only:
            text.append(" · READ-ONLY", self.palette.warning)
        main = self.main
        text.append(f" · work {len(main.work.entries)} · runs {len(main.runs.runs)}")
        if not self.live:
            text.append(" · manual refresh")
        elif self.paused:
            text.append(" · PAUSED (p)", self.palette.warning)
        else:
            text.append(f" · live every {self.config.refresh_seconds:g}s")
        if self.last_refresh is not None:
            text.append(f" · read {self.last_refresh.strftime('%H:%M:%S')}", "dim")
        self.main.set_status(text)

    # messages

    def toast(self, message: str, *, severity: SeverityLevel = "information", live: bool = False) -> None:
        """Show a message. Live notices (new work, overdue, runs ended) are recorded but not shown over a
        dialog: a person filling in a form should not have it covered by the stream of a busy queue."""
        self.toasts.append(message)
        if live and isinstance(self.screen, ModalScreen):
            return
        self.notify(message, severity=severity, markup=False, timeout=LIVE_TOAST_SECONDS if live else None)

    def report_error(self, source: str, answer: Envelope) -> None:
        message = f"{source}: {error_code(answer)}: {error_message(answer)}"
        if message != self._last_error:
            self._last_error = message
            self.toast(message, severity="error")

    def show_answer(self, title: str, answer: Envelope) -> None:
        """Success is a toast with the new state; an error opens a dialog with every issue."""
        if answer.get("ok"):
            self.toast(f"{title}: {answer_summary(answer)}")
        else:
            self.push_screen(AnswerDialog(title, answer))

    # process documents (embedded only)

    async def document(self, name: str, version: int) -> Process | None:
        if not self.capabilities.process_document:
            return None
        key = (name, version)
        if key not in self._documents:
            self._documents[key] = await self.client.process_document(name, version)
        return self._documents[key]

    async def limits(self) -> dict[str, Any]:
        """The server's `describe.limits`, read once: the check thresholds a verdict was judged by."""
        if self._limits is None:
            answer = await self.client.describe()
            if not answer.get("ok"):
                return {}
            self._limits = dict(answer["data"].get("limits") or {})
        return self._limits

    async def check_bars(self, name: str, version: int) -> Callable[[str], BarOf]:
        """Per step, the bar each verdict question had to clear: the document's where we have it."""
        document, limits = await self.document(name, version), await self.limits()

        def for_step(step_id: str) -> BarOf:
            bars = step_bars(document, step_id, limits)
            return lambda question: bar_for(question, bars, limits)

        return for_step

    def people(self) -> list[str]:
        return [identity.id for identity in self.client.people()]

    # app actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show_tab" and parameters == ("endpoint",):
            return self.session is not None and self.session.endpoint is not None
        return super().check_action(action, parameters)

    def action_ready(self, action: str) -> bool:
        return self.session is not None or action in ("quit", "help", "command_palette")

    def action_show_tab(self, tab: str) -> None:
        if isinstance(self.screen, MainScreen):
            self.main.show_tab(tab)
            if tab == "processes":
                self.reload_soon()

    def action_help(self) -> None:
        self.push_screen(HelpDialog(self.screen))

    def action_refresh_now(self) -> None:
        self.reload_soon()

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        self.toast("Live refresh paused" if self.paused else "Live refresh resumed")
        self.update_status()

    def action_pick_theme(self) -> None:
        self.action_change_theme()
