"""The flows that span screens: decide, cancel (one run or every marked one), start a run, send an
event, act as someone else, publish. Each asks what the protocol records, names what it acts on,
calls the server and shows its answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from console.answer import run_state_line
from console.client.envelope import Envelope, failure
from console.client.paging import all_pages
from console.modals.common import AnswerDialog, ChoiceDialog, PathDialog, ReasonDialog, ResultsDialog
from console.modals.decide import DecideDialog
from console.modals.event import EventDialog
from console.modals.start import StartRunDialog
from console.screens.run_detail import RunScreen

if TYPE_CHECKING:
    from console.app import ApcApp


class Flows:
    """Mixed into the app, whose screens and client these use."""

    def open_run(self: ApcApp, run_id: str) -> None:
        self.push_screen(RunScreen(run_id))

    def open_decision(self: ApcApp, entry: dict[str, Any]) -> None:
        def decided(answer: Envelope | None) -> None:
            if answer is not None:
                self.toast(f"Decision accepted: {run_state_line(answer['data'])}")
                self.reload_soon()

        self.push_screen(
            DecideDialog(self.client, entry, self.palette, people=self.people(), check_bars=self.check_bars),
            decided,
        )

    def confirm_cancel(self: ApcApp, runs: list[dict[str, Any]]) -> None:
        """Ask for the reason, naming every run it will cancel; then cancel each and show each answer."""
        if len(runs) == 1:
            run = runs[0]
            title = f"Cancel run {run['id']} ({run['process']}, {run['state']})"
        else:
            title = f"Cancel {len(runs)} marked runs"
        subject = [f"{run['id']} · {run['process']} v{run.get('version')} · {run['state']}" for run in runs]
        subject.append("Cancelling does not undo anything the run already caused outside the server.")

        def confirmed(reason: str | None) -> None:
            if reason is not None:
                self.run_worker(self._cancel(runs, reason), group="cancel")

        self.push_screen(
            ReasonDialog(title, subject, confirm="Cancel run" if len(runs) == 1 else "Cancel runs"), confirmed
        )

    async def _cancel(self: ApcApp, runs: list[dict[str, Any]], reason: str) -> None:
        results = [(run["id"], await self.client.cancel(run["id"], reason)) for run in runs]
        if len(results) == 1:
            self.show_answer(f"Cancel {results[0][0]}", results[0][1])
        else:
            self.main.runs.marked -= {run_id for run_id, answer in results if answer.get("ok")}
            await self.push_screen(ResultsDialog(f"Cancelled {len(results)} runs", results))
        await self.reload_all()

    def start_run_of(self: ApcApp, process: dict[str, Any]) -> None:
        def started(answer: Envelope | None) -> None:
            if answer is not None:
                self.toast(f"Started {process['name']}: {run_state_line(answer['data'])}")
                self.reload_soon()
                self.open_run(answer["data"]["run"]["id"])

        self.push_screen(StartRunDialog(self.client, process, self.palette, people=self.people()), started)

    def ask_event(self: ApcApp, view: dict[str, Any]) -> None:
        run = view["run"]
        self.run_worker(self._ask_event(run, view), group="event")

    async def _ask_event(self: ApcApp, run: dict[str, Any], view: dict[str, Any]) -> None:
        waiting = [
            s["id"]
            for s in view.get("steps") or ()
            if s["kind"] == "wait_for" and s.get("state") == "waiting"
        ]
        document = await self.document(run["process"], int(run["version"]))
        names = waiting if document is None else [str(document.step(step).value) for step in waiting]

        async def send(event: tuple[str, dict[str, Any] | None] | None) -> None:
            if event is not None:
                answer = await self.client.send_event(run["id"], event[0], event[1])
                self.show_answer(f"Event {event[0]} to {run['id']}", answer)
                await self.reload_all()

        await self.push_screen(EventDialog(run, names), send)

    async def action_start_run(self: ApcApp) -> None:
        processes, _, error = await all_pages(lambda c: self.client.list_processes(cursor=c))
        if error is not None:
            self.show_answer("Processes", error)
            return
        choices = [(f"{p['name']} v{p.get('version')} · {p.get('description', '')}", p) for p in processes]

        def chosen(process: dict[str, Any] | None) -> None:
            if process is not None:
                self.start_run_of(process)

        self.push_screen(ChoiceDialog("Start a run of which process?", choices), chosen)

    def action_switch_identity(self: ApcApp) -> None:
        people = self.client.people()

        def chosen(identity: Any) -> None:
            if identity is not None:
                self.client.switch_identity(identity)
                self.main.work.forget()
                self.toast(f"Now acting as {identity.id}")
                self.reload_soon()

        choices = [(f"{p.id}{' (operator)' if p.operator else ''}", p) for p in people]
        self.push_screen(ChoiceDialog("Act as which person?", choices), chosen)

    def action_publish(self: ApcApp) -> None:
        async def publish(path: str | None) -> None:
            if path is None:
                return
            result = await self.client.publish(Path(path).expanduser())
            if result.ok:
                state = "published" if result.created else "unchanged, already published"
                self.toast(f"{result.name} v{result.version}: {state}")
                self.reload_soon()
            else:
                answer = failure("invalid", f"{path} was not published", list(result.issues))
                await self.push_screen(AnswerDialog("Publish", answer))

        self.push_screen(
            PathDialog("Publish a process folder (roles bound to groups of the same name)"), publish
        )
