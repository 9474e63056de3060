"""The flows that span screens: read a run, decide, cancel (one run or every marked one), start a run,
send an event, act as someone else, publish, and the evidence files' view, save and copy. Each asks
what the protocol records, names what it acts on, calls the server and shows its answer.

`Flows` is a plain object the app hands its messages to; it uses the app for Textual's services
(screens, workers, notifications) and for the connection, and nothing in it is reached from a pane.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from console.client import Identity, failure
from console.client.files import FetchedFile
from console.client.run_log import RunLog, RunLogEntry
from console.client.wire import (
    CancelResult,
    DecideResult,
    Envelope,
    PersonWorkEntry,
    ProcessSummary,
    RecordedEvidence,
    Run,
    RunSummary,
    RunView,
    StartRunResult,
)
from console.live.documents import Documents
from console.live.paging import PAGE, all_pages
from console.live.refresh import item_key
from console.modals.common import (
    AnswerDialog,
    ChoiceDialog,
    PathDialog,
    ReasonDialog,
    TextDialog,
)
from console.modals.decide import DecideDialog
from console.modals.event import Event, EventDialog
from console.modals.publish import PublishDialog
from console.modals.start import StartRunDialog
from console.panes.evidence import READING, EvidencePane, FileCheck, check_file
from console.panes.work import item_kind
from console.screens.run import RunDetail, RunScreen
from console.views.answer import event_line, run_now_line, run_state_line
from console.views.format import one_line
from engine.document import load_path

if TYPE_CHECKING:
    from console.app import ApcApp


class Flows:
    def __init__(self, app: ApcApp, documents: Documents) -> None:
        self.app = app
        self.documents = documents

    # one run

    async def open_run(self, run_id: str) -> None:
        screen = RunScreen(run_id, self.app.permissions)
        await self.app.push_screen(screen)
        self.app.show_notices()
        await self.load_run(screen)

    async def find_run(self, run_id: str) -> None:
        """A run id typed in the runs search: open it when the server knows it, even when it is not among
        the rows loaded; else the search stays a search of the loaded rows, as the runs pane shows it."""
        answer = await self.app.client.get_run(run_id)
        if answer["ok"]:
            self.app.main.runs.clear_search()
            await self.open_run(run_id)

    async def load_run(self, screen: RunScreen) -> None:
        """Read the run again and show it, with its document and each verdict's bars; then read back
        any evidence file not yet checked (a worker of the pane, so closing the run stops it). A run
        closed while it was being read is left alone."""
        app = self.app
        answer = await app.client.get_run(screen.run_id)
        if not answer["ok"]:
            app.report_error(f"run {screen.run_id}", answer)
            return
        view = answer["data"]
        name, version = view["run"]["process"], int(view["run"]["version"])
        document = await self.documents.get(name, version)
        bars = await self.documents.check_bars(name, version)
        log, note = await self.run_log(screen.run_id)
        if not screen.is_attached:
            return
        await screen.show(RunDetail(view, document, bars, log, note), app.now(), app.palette)
        pane = screen.evidence
        unchecked = pane.unchecked()
        if unchecked and not pane.reading_files:
            pane.run_worker(self.check_files(pane, unchecked), group=READING, exclusive=True)

    async def run_log(self, run_id: str) -> tuple[RunLog | None, str]:
        """The whole run log (every page; a run keeps at most about a thousand entries), or None
        and why not."""
        client = self.app.client
        answer = await client.run_log(run_id)
        if answer is None:
            return None, "this server offers no run log"
        entries: list[RunLogEntry] = []
        while True:
            if not answer["ok"]:
                return None, f"the run log could not be read: {answer['error']['message']}"
            entries += answer["data"]["entries"]
            cursor = answer["data"]["nextCursor"]
            if cursor is None:
                return {"runId": run_id, "entries": entries, "nextCursor": None}, ""
            again = await client.run_log(run_id, cursor)
            if again is None:
                return None, "this server stopped offering the run log"
            answer = again

    async def check_files(self, pane: EvidencePane, items: Sequence[RecordedEvidence]) -> None:
        """Read each file back through its signed URL and record whether it still matches its hash.

        Progress shows in the pane as it comes; `esc` there cancels this worker."""
        pane.reading_files = True
        try:
            for item in items:
                url = item.get("url")
                result: FileCheck
                if not url:
                    result = "no URL"
                else:
                    fetched = await self.app.client.fetch_file(url, partial(pane.progress, item))
                    result = check_file(item, fetched) if isinstance(fetched, FetchedFile) else "unreadable"
                pane.record(item, result)
        finally:
            pane.reading_files = False
        pane.redraw()

    # decide

    def decide(self, entry: PersonWorkEntry) -> None:
        """Open the form; once decided, say what the run does now and put the queue's cursor on the
        next item, as a mail client does."""
        app = self.app
        after = app.main.work.key_after(item_key(entry)) if app.is_screen_installed("main") else None

        async def next_item() -> None:
            await app.reload_all()
            if after is not None:
                app.main.work.select(after)

        def decided(result: DecideResult | None) -> None:
            if result is not None:
                app.toast(f"{dialog.decision} {entry['workItem']['stepId']}: {run_now_line(result)}")
                app.run_worker(next_item(), group="reload", exclusive=True)

        dialog = DecideDialog(
            app.client,
            entry,
            app.palette,
            people=app.people(),
            check_bars=self.documents.check_bars,
            confirm_approvals=app.config.confirm_approvals,
            now=app.now,
        )
        app.push_screen(dialog, decided)

    async def decide_in_run(self, run_id: str, step_id: str | None) -> None:
        """Decide in this run: the caller's item at `step_id`, their only one, or ask which."""
        app = self.app
        work, _, error = await all_pages(lambda c: app.client.get_work(limit=PAGE, cursor=c))
        if error is not None:
            app.report_error("work queue", error)
            return
        mine = [e for e in work if "workItem" in e and e["runId"] == run_id]
        at_step = [e for e in mine if e["workItem"]["stepId"] == step_id]
        if len(at_step) == 1 or len(mine) == 1:
            self.decide((at_step or mine)[0])
        elif not mine:
            app.toast(f"No open work item of yours in run {run_id}.", severity="warning")
        else:

            def chosen(entry: PersonWorkEntry | None) -> None:
                if entry is not None:
                    self.decide(entry)

            choices = [
                (f"{item_kind(e)} · {e['workItem']['stepId']} · {one_line(e['workItem']['text'], 80)}", e)
                for e in mine
            ]
            app.push_screen(ChoiceDialog(f"Decide which item of run {run_id}?", choices), chosen)

    # cancel

    def confirm_cancel(self, runs: Sequence[Run | RunSummary]) -> None:
        """Ask for the reason, naming every run it will cancel; then cancel each and show each answer."""
        if len(runs) == 1:
            run = runs[0]
            title = f"Cancel run {run['id']} ({run['process']}, {run['state']})"
        else:
            title = f"Cancel {len(runs)} marked runs"
        subject = [f"{run['id']} · {run['process']} v{run['version']} · {run['state']}" for run in runs]
        subject.append("Cancelling does not undo anything the run already caused outside the server.")

        def confirmed(reason: str | None) -> None:
            if reason is not None:
                self.app.run_worker(self.cancel([run["id"] for run in runs], reason), group="cancel")

        confirm = "Cancel run" if len(runs) == 1 else "Cancel runs"
        self.app.push_screen(ReasonDialog(title, subject, confirm=confirm), confirmed)

    async def cancel(self, run_ids: Sequence[str], reason: str) -> None:
        """Cancel each run in turn; with several, the runs status line counts them and `esc` stops the
        rest. The answers are told even when the worker is cancelled (`esc`), which it then still is."""
        app = self.app
        results: list[tuple[str, Envelope[CancelResult]]] = []
        pane = app.main.runs if app.main.built("runs") else None
        try:
            for run_id in run_ids:
                if len(run_ids) > 1 and pane is not None:
                    pane.progress = f"cancelling {len(results) + 1:,} of {len(run_ids):,}… (esc stops)"
                    pane.show_status()
                answer = await app.client.cancel(run_id, reason)
                results.append((run_id, answer))
                if answer["ok"]:
                    app.ended_runs.cancelled_here.add(run_id)
        except BaseException:
            self.tell_cancelled(run_ids, results)
            app.reload_soon()
            raise
        finally:
            if pane is not None:
                pane.progress = ""
                pane.show_status()
        await app.reload_all()
        self.tell_cancelled(run_ids, results)

    def tell_cancelled(
        self, run_ids: Sequence[str], results: Sequence[tuple[str, Envelope[CancelResult]]]
    ) -> None:
        """One run: its answer. Several: one line per run in the activity log (with the error code of
        each that failed), then `1 of 2 cancelled, 1 failed` on the status line; cancelled runs are
        unmarked."""
        app = self.app
        if len(run_ids) == 1:
            for run_id, answer in results:
                if answer["ok"]:
                    app.toast(run_state_line(answer["data"]))  # `r_8f2… cancelled`, said once
                else:
                    app.show_answer(f"Cancel {run_id}", answer, run_state_line)
            return
        for run_id, answer in results:
            if answer["ok"]:
                app.toast(run_state_line(answer["data"]))
            else:
                error = answer["error"]
                app.toast(f"{run_id} not cancelled: {error['code']}: {error['message']}", severity="error")
        done = {run_id for run_id, answer in results if answer["ok"]}
        if app.main.built("runs"):
            app.main.runs.unmark(done)
        failed = len(results) - len(done)
        summary = f"{len(done)} of {len(run_ids)} cancelled, {failed} failed"
        if len(results) < len(run_ids):
            summary += f", stopped with {len(run_ids) - len(results)} left"
        app.toast(summary, severity="warning" if failed or len(results) < len(run_ids) else "information")

    # start a run

    async def choose_process(self) -> None:
        app = self.app
        processes, _, error = await all_pages(lambda c: app.client.list_processes(cursor=c))
        if error is not None:
            app.push_screen(AnswerDialog("Processes", error))
            return
        choices = [(f"{p['name']} v{p['version']} · {p['description']}", p) for p in processes]

        def chosen(process: ProcessSummary | None) -> None:
            if process is not None:
                self.start_run(process)

        app.push_screen(ChoiceDialog("Start a run of which process?", choices), chosen)

    def start_run(self, process: ProcessSummary) -> None:
        app = self.app

        def started(view: StartRunResult | None) -> None:
            if view is not None:
                app.toast(f"Started {process['name']}: {run_state_line(view)}")
                app.reload_soon()
                app.open_run(view["run"]["id"])

        app.push_screen(StartRunDialog(app.client, process, app.palette, people=app.people()), started)

    # events

    async def ask_event(self, view: RunView) -> None:
        app, run = self.app, view["run"]
        waiting = [s["id"] for s in view["steps"] if s["kind"] == "wait_for" and s["state"] == "waiting"]
        document = await self.documents.get(run["process"], int(run["version"]))
        names = waiting if document is None else [str(document.step(step).value) for step in waiting]

        async def send(event: Event | None) -> None:
            if event is not None:
                answer = await app.client.send_event(run["id"], event[0], event[1])
                app.show_answer(f"Event {event[0]} to {run['id']}", answer, event_line)
                await app.reload_all()

        await app.push_screen(EventDialog(run, names), send)

    # admin (embedded only)

    def switch_identity(self) -> None:
        app = self.app

        def chosen(identity: Identity | None) -> None:
            if identity is not None:
                app.client.switch_identity(identity)
                app.main.work.forget()
                app.lists.forget()
                app.toast(f"Now acting as {identity.id}")
                app.reload_soon()

        choices = [(f"{p.id}{' (operator)' if p.operator else ''}", p) for p in app.client.people()]
        app.push_screen(ChoiceDialog("Act as which person?", choices), chosen)

    def publish(self) -> None:
        """Ask for the folder, then for the group of every role (showing what it `requires`), and
        publish only once the operator confirms (spec §7)."""
        app = self.app

        def chosen_path(path: str | None) -> None:
            if path is None:
                return
            source = Path(path).expanduser()
            loaded = load_path(source)
            if loaded.process is None:
                answer = failure("invalid", f"{path} cannot be published", [str(i) for i in loaded.issues])
                app.push_screen(AnswerDialog("Publish", answer))
                return

            async def confirmed(bind: dict[str, str] | None) -> None:
                if bind is not None:
                    await self.publish_bound(source, bind)

            app.push_screen(PublishDialog(source, loaded.process), confirmed)

        app.push_screen(PathDialog("Publish a process folder"), chosen_path)

    async def publish_bound(self, source: Path, bind: dict[str, str]) -> None:
        app = self.app
        result = await app.client.publish(source, bind)
        if result.ok:
            state = "published" if result.created else "unchanged, already published"
            app.toast(f"{result.name} v{result.version}: {state}")
            app.reload_soon()
        else:
            answer = failure("invalid", f"{source} was not published", list(result.issues))
            await app.push_screen(AnswerDialog("Publish", answer))

    # evidence files

    def view_text(self, title: str, text: str) -> None:
        self.app.push_screen(TextDialog(title, text))

    def save_file(self, name: str, content: bytes) -> None:
        app = self.app

        def save(path: str | None) -> None:
            if path is None:
                return
            target = Path(path).expanduser()
            try:
                target.write_bytes(content)
            except OSError as exc:
                app.push_screen(
                    AnswerDialog("Save failed", failure("invalid", f"could not write {target}: {exc}"))
                )
                return
            app.toast(f"Saved {len(content)} bytes to {target}")

        app.push_screen(PathDialog(f"Save {name} to", str(Path.cwd() / name)), save)

    def copy(self, text: str) -> None:
        self.app.copy_to_clipboard(text)
        self.app.toast(f"Copied: {text}")
