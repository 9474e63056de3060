"""Sending an event to a run: named from the waits that are ready for one, then the server's answer."""

from __future__ import annotations

from console.client.wire import RunView
from console.flows.shell import Context, show_answer
from console.modals.event import Event, EventDialog
from console.views.answer import event_line


async def ask_event(flow: Context, view: RunView) -> None:
    shell, run = flow.shell, view["run"]
    waiting = [s["id"] for s in view["steps"] if s["kind"] == "wait_for" and s["state"] == "waiting"]
    document = await flow.documents.get(run["process"], int(run["version"]))
    names = waiting if document is None else [str(document.step(step).value) for step in waiting]

    async def send(event: Event | None) -> None:
        if event is not None:
            answer = await flow.client.send_event(run["id"], event[0], event[1])
            show_answer(shell, f"Event {event[0]} to {run['id']}", answer, event_line)
            await shell.reload_all()

    await shell.push_screen(EventDialog(run, names), send)
