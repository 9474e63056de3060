"""The live refresh: one loop that reads only what is on screen (which pages: `console.live.lists`),
and less often while nothing changes.

A tick reads the work queue, and the runs list when it is shown; an open run reads its run only. The
interval backs off while reads bring nothing new or the server answers `retry`, and drops back at the
first change or key the operator presses; `p` pauses it, and a paused console makes no calls. A full
reload (`r`, after an action) reads the runs list too; rows scrolled to and `G` (to the end) go
through the same lists. The status line says how it stands.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from rich.text import Text
from textual.timer import Timer

from console.client import Failure
from console.client.wire import RunSummary
from console.flows.run import load_run
from console.flows.shell import Context
from console.live.lists import Backoff, RunsQuery, is_retry
from console.live.paging import Change, Window, all_pages
from console.messages import RowsWanted
from console.screens.run import RunScreen


class LiveRefresh:
    """The live refresh of one connection's screens, and what its reads found beyond the lists."""

    def __init__(self, flow: Context, backoff: Backoff, *, live: bool, where: str) -> None:
        """`live` False: a read only when asked (`r`, after an action). `where`: the connection, for
        the status line."""
        self.flow = flow
        self.backoff = backoff
        self.live = live
        self.where = where
        self.paused = False
        self.calls_paused = 0
        """Ticks skipped while paused (a paused console reads nothing)."""
        self.last_refresh: datetime | None = None
        self.process_names: set[str] = set()
        """Published process names, read once (the runs search knows them)."""
        self._processes_read = False
        self._timer: Timer | None = None

    # the loop

    def arm(self) -> None:
        """The next tick, after the interval as it stands now (it grows while nothing changes)."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.flow.shell.set_timer(self.backoff.seconds, self.tick)

    def tick(self) -> None:
        shell = self.flow.shell
        if not shell.is_running:  # closing: Textual cancelled the workers and stops the timers next
            return
        if self.paused:
            self.calls_paused += 1
            return
        shell.run_while_open(self._tick_and_arm, group="reload", exclusive=True)

    async def _tick_and_arm(self) -> None:
        try:
            await self.reload_all(full=False)
        finally:
            if self.live and self.flow.shell.is_running:
                self.arm()

    def operator_here(self) -> None:
        """A key pressed: refresh at the configured pace again."""
        if self.backoff.factor != 1:
            self.backoff.reset()
            if self.live and not self.paused:
                self.arm()

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        if not self.paused and self.live:
            self.backoff.reset()
            self.arm()
        self.flow.shell.toast("Live refresh paused" if self.paused else "Live refresh resumed")
        self.show_status()

    def reload_soon(self) -> None:
        self.flow.shell.run_while_open(self.reload_all, group="reload", exclusive=True)

    # reading again

    async def reload_all(self, *, full: bool = True) -> None:
        """Read what is on screen again (a tick is `full=False`) and show it. The processes are read
        once the runs tab is built (its search knows their names), and again with their documents
        while their tab is shown."""
        shell, lists = self.flow.shell, self.flow.lists
        if not shell.is_screen_installed("main"):
            return
        now, main = shell.now(), shell.main
        if not full and isinstance(shell.screen, RunScreen):
            await load_run(self.flow, shell.screen)
            self.last_refresh = now
            self.show_status()
            return
        shown = main.active_tab == "processes" and main.built("processes")
        if shown or (main.built("runs") and not self._processes_read):
            processes, _, error = await all_pages(lambda c: self.flow.client.list_processes(cursor=c))
            self._processes_read = error is None
            if error is None:
                self.process_names = {p["name"] for p in processes}
                if main.built("runs"):
                    main.runs.process_names = self.process_names
            if error is None and shown:  # the documents (their maps) only for the tab that shows them
                documents = self.flow.documents
                found = {p["name"]: await documents.get(p["name"], int(p["version"])) for p in processes}
                main.processes.show(processes, found, shell.palette)
        work = main.work
        lists.filter_work(work.filters().process)

        async def read_work() -> tuple[bool, Failure | None]:
            changed, error = await lists.visible(lists.work, work.table.window, head=True, tail=not full)
            if self.show_work(error, now) and shell.ready.is_set():  # the first screen is written before
                await self.date_work()  # its rows are dated
            return changed, error

        # the two lists side by side: the first screen waits for the slower read, not for both
        (work_changed, work_error), (runs_changed, runs_error) = await asyncio.gather(
            read_work(), self.read_runs(full=full)
        )
        changed = work_changed or runs_changed
        if isinstance(shell.screen, RunScreen):
            await load_run(self.flow, shell.screen)
        self.last_refresh = now
        if not full:
            self.backoff.after(changed=changed, retry=is_retry(work_error) or is_retry(runs_error))
        for source, error in (("work queue", work_error), ("runs", runs_error)):
            if error is not None:
                shell.report_error(source, error)
        self.show_status()

    def show_work(self, error: Failure | None, now: datetime) -> bool:
        """Show the queue as read, unless its first read failed (a later one leaves the rows read
        before); whether it was shown."""
        lists, work = self.flow.lists, self.flow.shell.main.work
        if error is not None and not lists.work.started:
            return False
        work.show(lists.work, work.updated, now, self.flow.shell.palette, lists.work_process)
        return True

    async def read_runs(self, *, full: bool) -> tuple[bool, Failure | None]:
        """The runs list when it is shown or on a full reload, else its first page once (the runs that
        end are told against it); nothing for the first screen, which shows the work queue only."""
        shell, lists = self.flow.shell, self.flow.lists
        main = shell.main
        built = main.built("runs")
        if not (built or shell.ready.is_set()):
            return False, None
        if not (full or main.active_tab == "runs" or not lists.runs.started):
            return False, None
        runs_args, problems = main.runs.query_arguments() if built else (RunsQuery(), [])
        lists.filter_runs(runs_args)
        window = main.runs.table.window if built else Window(0, -1)
        changed, error = await lists.visible(lists.runs, window, head=True)
        changes = lists.runs.take_changes()
        self._tell_ended(changes)
        if main.built("runs") and (error is None or lists.runs.started):
            main.runs.show(lists.runs, lists.runs.more, shell.palette, problems, changes)
        return changed, error

    def _tell_ended(self, changes: list[Change[RunSummary]]) -> None:
        news = self.flow.ended_runs.news(changes)
        if news is not None:
            text, count = news
            self.flow.shell.toast(text, live=True, group="runs ended", count=count)

    async def load_rows(self, message: RowsWanted) -> None:
        """Rows scrolled to (read the pages they are on), or `G`: every page to the end, with progress."""
        shell, lists = self.flow.shell, self.flow.lists
        if not shell.is_screen_installed("main"):
            return
        main = shell.main
        pane = main.work if message.source == "work" else main.runs
        pages = lists.work if message.source == "work" else lists.runs
        if message.to_end:

            def progress(count: int) -> None:
                pane.progress = f"loading… {count:,} rows (esc stops)"
                pane.show_status()

            try:
                error = await lists.to_end(pages, progress)
            finally:
                pane.progress = ""
            self.show_list(message.source)
            pane.table.move_cursor(row=len(pages.keys) - 1)
        else:
            error = await lists.wanted(pages, message.window)
            self.show_list(message.source)
            if message.source == "work":
                await self.date_work()
        if error is not None:
            shell.report_error(message.source, error)

    async def date_work(self) -> None:
        """Date the work items on screen (their runs' last change), reading only runs not dated yet."""
        shell, lists = self.flow.shell, self.flow.lists
        work = shell.main.work
        window = work.table.window
        changed = await lists.ages(work.table.keys[window.first : window.last + 1])
        if changed or work.updated is not lists.updated:
            work.updated = lists.updated
            work.redraw(shell.now(), shell.palette)

    def show_list(self, source: str) -> None:
        shell, lists = self.flow.shell, self.flow.lists
        main = shell.main
        if source == "work":
            main.work.show(lists.work, main.work.updated, shell.now(), shell.palette, lists.work_process)
        else:
            main.runs.show(lists.runs, lists.runs.more, shell.palette, main.runs.problems)

    def show_runs_tab(self) -> None:
        """The runs tab shown the first time: the rows already read, searched with the process names."""
        runs = self.flow.shell.main.runs
        runs.process_names = self.process_names
        self.show_list("runs")

    # the status line

    def show_status(self) -> None:
        """Who the console acts as and where, how many rows each list holds, how the refresh stands,
        when it last read, and the demo clock's pace."""
        shell, flow = self.flow.shell, self.flow
        if not shell.is_screen_installed("main"):
            return
        palette, main = shell.palette, shell.main
        who = flow.client.identity
        text = Text(end="")
        text.append(f" {who.id}", "bold")
        text.append(f" ({who.kind}{', operator' if who.operator else ''}) · {self.where}")
        if flow.permissions.read_only:
            text.append(" · READ-ONLY", palette.warning)
        work, runs = flow.lists.work, flow.lists.runs
        text.append(f" · work {len(work.keys):,}{'+' if work.more else ''}")
        # the runs list is read on every tick only while its tab is shown (else once after the first screen,
        # and on a full reload): a count from an older read would pass for a live one
        if runs.started and (not self.live or main.active_tab == "runs"):
            text.append(f" · runs {len(runs.keys):,}{'+' if runs.more else ''}")
        if not self.live:
            text.append(" · manual refresh")
        elif self.paused:
            text.append(" · PAUSED (p)", palette.warning)
        else:
            text.append(f" · live every {self.backoff.seconds:g}s")
        if self.last_refresh is not None:
            text.append(f" · read {self.last_refresh.strftime('%H:%M:%S')}", "dim")
        presenter = flow.presenter
        if presenter is not None:
            text.append(f" · demo {presenter.speed:g}x")
            if presenter.paused:
                text.append(" · DEMO PAUSED (Z)", f"bold {palette.warning}")
        main.set_status(text)
