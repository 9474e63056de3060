"""The operator console: one Textual app over one `Client`, embedded or remote.

The app owns the connection and the theme, and starts the live refresh once connected
(`console.flows.refresh`). It hands each pane what it shows and handles what the panes ask for
(`console.messages`) with `@on`, leaving what each action does to `console.flows`, whose shell it is.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from time import monotonic

from rich.text import Text
from textual import events, on
from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TextArea
from textual.worker import Worker, WorkerState

from console import messages
from console.client import Client, Failure
from console.client.envelope import error_code, error_message
from console.flows import admin, files, present
from console.flows.cancel import confirm_cancel
from console.flows.decide import decide, decide_in_run
from console.flows.event import ask_event
from console.flows.refresh import LiveRefresh
from console.flows.run import find_run, open_run
from console.flows.shell import Context
from console.flows.start import choose_process, start_run
from console.keys.commands import RegistryCommands
from console.keys.registry import bindings
from console.keys.scoped import Permissions, Scoped
from console.live.documents import Documents
from console.live.lists import Backoff, EndedRuns, Lists
from console.live.notices import NoticeLog
from console.live.paging import Window
from console.live.session import ExtraPane, Opener, OpenFailed, Session
from console.modals.common import ChoiceDialog
from console.modals.help import HelpDialog
from console.screens.main import MainScreen
from console.settings.config import ConsoleConfig
from console.settings.themes import DEFAULT_THEME, LoadedThemes, load_themes
from console.views.palette import Palette
from console.widgets.live_table import STOPPABLE, StopRequested

TERMINAL_CHECK_SECONDS = 1.0
"""How often the console looks whether its terminal is still there (`terminal_open`)."""
TERMINAL_GONE = 1
"""The exit code when the terminal hung up under the console."""


def terminal_open() -> bool:
    """Whether standard input is a terminal that is still there (a hung-up one is no longer a tty)."""
    stdin = sys.__stdin__
    try:
        return stdin is not None and os.isatty(stdin.fileno())
    except ValueError:  # closed
        return False


GC_THRESHOLDS = (1000, 5, 1000)
"""Python's collector while the console runs. A collection stops every thread (the engine's and the
demo's too) for as long as it walks what it collects, so a walk of the whole heap is a frame the
operator sees stall. The heap that stands at start-up and once the first page is drawn is frozen
(left out; `on_unmount` lets it back in), the middle generation is collected often, while it is
still small, and the whole heap rarely."""


class ApcApp(Scoped, App[None]):
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
        self.permissions = Permissions(read_only)
        self.config = config or ConsoleConfig()
        self.loaded_themes = themes or load_themes()
        self.live = live
        self.cursor_blink = cursor_blink
        self.extra_panes = list(extra_panes)
        self.toasts: list[str] = []
        """Every toast shown, in order: what an operator was told, kept for tests and the log."""
        self.ready = asyncio.Event()
        self.palette = Palette()
        self._flows: Context | None = None
        self._live_refresh: LiveRefresh | None = None
        self._gc_thresholds = gc.get_threshold()
        """The collector's thresholds before the console, put back when it closes."""
        self.notices = NoticeLog()
        self._lists: Lists | None = None
        self._take_first_theme()

    def _take_first_theme(self) -> None:
        """Register the loaded themes and take the configured one before the stylesheet is first read:
        what Textual's theme watcher does, less its reparse of every stylesheet with the theme's
        variables (setting `theme`, here or once running, queues that reparse before the first frame,
        and throws the first parse away)."""
        for theme in self.loaded_themes.themes:
            self.register_theme(theme)
        wanted = self.config.theme or DEFAULT_THEME
        if wanted in self.available_themes:
            self.set_reactive(App.theme, wanted)
            dark = self.current_theme.dark
            self.set_class(True, f"-theme-{wanted}", update=False)
            self.set_class(dark, "-dark-mode", update=False)
            self.set_class(not dark, "-light-mode", update=False)
            self._refresh_truecolor_filter(self.ansi_theme)
            self.stylesheet.set_variables(self.get_css_variables())
        self.palette = self._theme_palette()

    # connection

    @property
    def client(self) -> Client:
        assert self.session is not None, "the console is not connected yet"
        return self.session.client

    @property
    def flows(self) -> Context:
        """What the flows are handed: this app as their shell, and the connection's parts."""
        assert self._flows is not None, "the console is not connected yet"
        return self._flows

    @property
    def main(self) -> MainScreen:
        screen = self.get_screen("main")
        assert isinstance(screen, MainScreen)
        return screen

    def now(self) -> datetime:
        clock = self.session.clock if self.session is not None else None
        return clock.now() if clock is not None else datetime.now(UTC)

    async def on_mount(self) -> None:
        gc.set_threshold(*GC_THRESHOLDS)
        gc.freeze()  # what stood before the console (the engine, what it holds) is left out of collections
        for problem in self.loaded_themes.problems:
            self.toast(f"theme not loaded: {problem}", severity="warning")
        self.run_while_open(self._start, group="start")
        if not self.is_headless and terminal_open():
            self.set_interval(TERMINAL_CHECK_SECONDS, self._check_terminal, name="terminal")

    def _check_terminal(self) -> None:
        """End once the terminal hangs up (its window closed, or `make demo`'s tmux pane killed, where
        make, not the console, gets the hangup signal): Textual's driver then reads end-of-file, forever,
        and the console (the demo with it) would run on with nobody to see it."""
        if not terminal_open():
            self.exit(return_code=TERMINAL_GONE)

    async def _start(self) -> None:
        if self.session is None and self._opener is not None:
            try:
                self.session = await self._opener()
            except OpenFailed as failed:
                self.exit(return_code=1, message=f"apc: error: {failed}")
                return
        assert self.session is not None
        capabilities = replace(self.client.capabilities, presenter=self.session.presenter is not None)
        self.permissions = Permissions(self.read_only, capabilities)
        # the first page of the queue is read before the screen is built (a screen laid out before its
        # rows come is laid out and drawn again with them), and a remote client opens its session
        # (asking which tools the server offers) meanwhile, not after
        self._lists = Lists(self.client)
        documents = Documents(self.client)
        self._flows = Context(
            self,
            self.client,
            self.permissions,
            documents,
            self._lists,
            EndedRuns(),
            self.session.presenter,
        )
        backoff = Backoff(self.config.refresh_seconds)
        self._live_refresh = LiveRefresh(self._flows, backoff, live=self.live, where=self.session.where)
        opening = asyncio.ensure_future(self.client.extra_tools())
        reading = asyncio.ensure_future(self.lists.visible(self.lists.work, Window(0, -1), head=True))
        try:
            (_, error), _ = await asyncio.gather(reading, opening)
        finally:  # closing while the page is read
            opening.cancel()
            reading.cancel()
        if self.session.activity is not None:
            self.session.activity.listen(self._activity)
        fill = partial(self._fill_first_screen, error)
        main = MainScreen(self.permissions, self.now, self.session.endpoint, self.extra_panes, fill)
        self.install_screen(main, name="main")
        await self.push_screen("main")
        if self.live:
            self._live_refresh.arm()
        if self.live and self.session.watch is not None:
            self.run_while_open(partial(self.session.watch, self._live_refresh.tick), group="watch")
        self.call_after_refresh(self._up)  # if the first layout was not drawn (no size yet)

    def _fill_first_screen(self, error: Failure | None) -> None:
        """What the main screen shows when first laid out, put in as it mounts: the queue's first page
        (read already), the notices of the session, the status line; `_up` once that frame is written."""
        now = self.now()
        self.live_refresh.show_work(error, now)
        self.live_refresh.last_refresh = now
        for notice in self.session.notices if self.session is not None else ():
            level: SeverityLevel = "warning" if notice.startswith("Not published") else "information"
            self.toast(notice, severity=level)
        if error is not None:
            self.report_error("work queue", error)
        self.update_status()
        self.main.screen_layout_refresh_signal.subscribe(self, self._first_frame, immediate=True)

    def _first_frame(self, main: Screen[object]) -> None:
        """The main screen's first layout is drawn and handed to the terminal (Textual lays it out twice
        more before it is idle: for its first resize, and as its mount is awaited)."""
        main.screen_layout_refresh_signal.unsubscribe(self)
        self._up()

    def _up(self) -> None:
        """The first screen is written: what it did not wait for is read now, the extra tabs built."""
        if self.ready.is_set():
            return
        gc.freeze()  # and what stands now: Textual, the first pages
        self.ready.set()
        self.run_while_open(self._after_first_screen, group="start")
        self.run_while_open(self.main.build_extra_panes, group="build")

    async def _after_first_screen(self) -> None:
        """What the first screen did not wait for: its rows' dates, the runs list's first page."""
        refresh = self.live_refresh
        _, error = (await asyncio.gather(refresh.date_work(), refresh.read_runs(full=True)))[1]
        if error is not None:
            self.report_error("runs", error)
        self.update_status()

    def run_while_open(
        self, work: Callable[[], Awaitable[object]], *, group: str, exclusive: bool = False
    ) -> Worker[None]:
        """Run `work` in a worker that the app's closing ends quietly.

        Closing takes down the screens and panes a worker reads, and cancels the workers, in the
        order Textual chooses (`run_test` prunes the screens first, `exit` cancels first): what a
        worker meets once the app is no longer running (NoMatches, a screen gone) is the closing, and
        there is nothing left to show it on. `work` is a function, called in the worker: a worker
        cancelled before it ran leaves no coroutine never awaited."""
        name = getattr(work, "__name__", "") or getattr(getattr(work, "func", None), "__name__", "")
        return self.run_worker(partial(self._while_open, work), name=name, group=group, exclusive=exclusive)

    async def _while_open(self, work: Callable[[], Awaitable[object]]) -> None:
        try:
            await work()
        except Exception:
            if self.is_running:
                raise

    async def on_unmount(self) -> None:
        # Textual cancels the workers as the app closes but does not wait for them: one cancelled in
        # the middle of a read would be left behind, still cancelling, once the app has closed
        workers = [w for w in self.workers if w.state is not WorkerState.PENDING]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*(worker.wait() for worker in workers), return_exceptions=True)
        gc.unfreeze()
        gc.set_threshold(*self._gc_thresholds)
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
        if main.built("runs"):
            main.runs.redraw(self.palette)
        self.update_status()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if not self.cursor_blink and isinstance(event.widget, Input | TextArea):
            event.widget.cursor_blink = False

    # live refresh

    @property
    def live_refresh(self) -> LiveRefresh:
        assert self._live_refresh is not None, "the console is not connected yet"
        return self._live_refresh

    @property
    def lists(self) -> Lists:
        assert self._lists is not None, "the console is not connected yet"
        return self._lists

    def reload_soon(self) -> None:
        if self._live_refresh is not None:
            self._live_refresh.reload_soon()

    def on_key(self, event: events.Key) -> None:
        if self._live_refresh is not None:
            self._live_refresh.operator_here()

    async def reload_all(self, *, full: bool = True) -> None:
        if self._live_refresh is not None:
            await self._live_refresh.reload_all(full=full)

    async def load_rows(self, message: messages.RowsWanted) -> None:
        if self._live_refresh is not None:
            await self._live_refresh.load_rows(message)

    @on(StopRequested)
    def stop_loading(self) -> None:
        """`esc` in a table: stop a load to the end, or a bulk cancel, where it stands."""
        for worker in self.workers:
            if worker.group in STOPPABLE and not worker.is_finished:
                worker.cancel()
                self.toast("Stopped")

    def update_status(self) -> None:
        if self._live_refresh is not None:
            self._live_refresh.show_status()

    # telling the operator

    def toast(
        self,
        message: str,
        *,
        severity: SeverityLevel = "information",
        live: bool = False,
        group: str | None = None,
        count: int = 1,
    ) -> None:
        """Tell the operator: the status line at the bottom of the screen and the activity log (5).
        Nothing is drawn over a dialog or the help, and notices of one group close together count as
        one. `live`: news a refresh found, which does not push the answer to the operator's own action
        off the status line for a few seconds (it is in the log at once)."""
        self.toasts.append(message)
        self.notices.add(
            self.now(), message, severity=severity, group=group, count=count, live=live, moment=monotonic()
        )
        self.show_notices()

    def _activity(self, text: str, severity: str) -> None:
        """A line from the engine's background work: into the log, grouped by its kind of line."""
        level: SeverityLevel = (
            "error" if severity == "error" else "warning" if severity == "warning" else "information"
        )
        self.toast(text, severity=level, live=True)

    def show_notices(self) -> None:
        entry = self.notices.latest
        if entry is None:
            return
        style = {"error": self.palette.error, "warning": self.palette.warning}.get(entry.severity, "")
        line = Text(entry.line, style=style, no_wrap=True, overflow="ellipsis", end="")
        for screen in self.screen_stack:
            for widget in screen.query("#notice"):
                if isinstance(widget, Static):
                    widget.update(line, layout=False)  # one line: no layout of the screen
        if self.is_screen_installed("main") and self.main.built("activity"):
            self.main.activity.show(self.notices.entries, self.palette)

    def report_error(self, source: str, answer: Failure) -> None:
        """An error the refresh meets: shown once, then counted while it repeats, with a hint."""
        entry = self.notices.error(
            self.now(), source, error_code(answer), error_message(answer), moment=monotonic()
        )
        if entry.count == 1:
            self.toasts.append(entry.text)
        self.show_notices()

    def open_run(self, run_id: str) -> None:
        self.run_while_open(partial(open_run, self.flows, run_id), group="open-run")

    # what the panes ask for

    @on(messages.OpenRun)
    def _open_run(self, message: messages.OpenRun) -> None:
        self.open_run(message.run_id)

    @on(messages.FindRun)
    def _find_run(self, message: messages.FindRun) -> None:
        self.run_while_open(partial(find_run, self.flows, message.run_id), group="open-run")

    @on(messages.DecideRequested)
    def _decide(self, message: messages.DecideRequested) -> None:
        decide(self.flows, message.entry)

    @on(messages.DecideInRunRequested)
    def _decide_in_run(self, message: messages.DecideInRunRequested) -> None:
        self.run_while_open(
            partial(decide_in_run, self.flows, message.run_id, message.step_id), group="decide"
        )

    @on(messages.CancelRequested)
    def _cancel(self, message: messages.CancelRequested) -> None:
        confirm_cancel(self.flows, message.runs)

    @on(messages.EventRequested)
    def _event(self, message: messages.EventRequested) -> None:
        self.run_while_open(partial(ask_event, self.flows, message.view), group="event")

    @on(messages.StartRunRequested)
    def _start_run(self, message: messages.StartRunRequested) -> None:
        start_run(self.flows, message.process)

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        """A tab shown (built, the first time, by the screen): fill it from what there is, read its list."""
        if event.pane.id == "activity":
            self.show_notices()
        elif event.pane.id == "runs" and self._lists is not None and not self.main.runs.loaded:
            self.live_refresh.show_runs_tab()
            self.call_after_refresh(self.reload_soon)
        elif event.pane.id == "processes":
            self.call_after_refresh(self.reload_soon)  # once laid out: the rows on screen are known
        self.update_status()  # the runs count shows while the runs list is live (`update_status`)

    @on(messages.RefreshRequested)
    def _refresh(self) -> None:
        self.reload_soon()

    @on(messages.RowsWanted)
    def _rows_wanted(self, message: messages.RowsWanted) -> None:
        if message.to_end:
            self.run_while_open(partial(self.load_rows, message), group="load-all", exclusive=True)
        else:
            self.run_while_open(
                partial(self.load_rows, message), group=f"rows-{message.source}", exclusive=True
            )

    @on(messages.Notice)
    def _notice(self, message: messages.Notice) -> None:
        self.toast(
            message.text,
            severity=message.severity,
            live=message.live,
            group=message.group,
            count=message.count,
        )

    @on(messages.ViewTextRequested)
    def _view_text(self, message: messages.ViewTextRequested) -> None:
        files.view_text(self, message.title, message.text)

    @on(messages.SaveFileRequested)
    def _save_file(self, message: messages.SaveFileRequested) -> None:
        files.save_file(self, message.name, message.content)

    @on(messages.CopyRequested)
    def _copy(self, message: messages.CopyRequested) -> None:
        files.copy(self, message.text)

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

    def action_help(self) -> None:
        self.push_screen(HelpDialog(self.screen))

    def action_refresh_now(self) -> None:
        self.reload_soon()

    def action_toggle_pause(self) -> None:
        self.live_refresh.toggle_pause()

    def action_pick_theme(self) -> None:
        """Our themes first, then Textual's; the current one marked."""
        ours = [theme.name for theme in self.loaded_themes.themes]
        names = ours + sorted(name for name in self.available_themes if name not in ours)

        def label(name: str) -> str:
            mark = "● " if name == self.theme else "  "
            return (
                f"{mark}{name}"
                + (" (current)" if name == self.theme else "")
                + ("" if name in ours else "  · Textual")
            )

        def chosen(name: str | None) -> None:
            if name is not None:
                self.theme = name

        self.push_screen(ChoiceDialog("Colour theme", [(label(n), n) for n in names]), chosen)

    HIDDEN_SYSTEM_COMMANDS = frozenset({"Theme", "Maximize"})
    """Textual's own palette entries that make no sense here: `T` picks the theme, panes do not maximise."""

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in self.HIDDEN_SYSTEM_COMMANDS:
                yield command

    async def action_start_run(self) -> None:
        await choose_process(self.flows)

    def action_switch_identity(self) -> None:
        admin.switch_identity(self.flows)

    def action_publish(self) -> None:
        admin.publish(self.flows)

    # presenter controls (a live demo only: `needs="presenter"`)

    def action_demo_pause(self) -> None:
        present.toggle_pause(self.flows)

    def action_demo_leave(self) -> None:
        present.leave(self.flows)

    def action_demo_faster(self) -> None:
        present.present(self.flows, "faster")

    def action_demo_slower(self) -> None:
        present.present(self.flows, "slower")

    def action_demo_stage(self) -> None:
        present.stage(self.flows)
