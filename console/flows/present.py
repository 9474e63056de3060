"""The presenter's keys in a live demo: pause the demo world, change its pace, leave the item or run
in view to the operator, stage a moment on a fresh run. Each is a control of the demo's `Presenter`,
whose answer is told; without a presenter none of this is offered (`needs="presenter"`)."""

from __future__ import annotations

from console.flows.shell import Context
from console.modals.common import ChoiceDialog
from console.screens.main import MainScreen
from console.screens.run import RunScreen


def present(flow: Context, action: str, arguments: dict[str, str] | None = None) -> None:
    presenter, shell = flow.presenter, flow.shell
    if presenter is None:
        return

    async def act() -> None:
        ok, message = await presenter.control(action, arguments or {})
        shell.toast(message, severity="information" if ok else "error")
        if action == "pause" and ok:
            # what is shown was read up to a refresh interval (minutes of demo time) ago: show it
            # at the time the clock stopped, so that nothing moves on while the demo is paused
            shell.repaint()
        else:
            shell.update_status()
        if action == "stage" and ok:
            shell.reload_soon()

    shell.run_while_open(act, group="presenter")


def toggle_pause(flow: Context) -> None:
    if flow.presenter is not None:
        present(flow, "resume" if flow.presenter.paused else "pause")


def leave(flow: Context) -> None:
    """The item or run in view: the open run, the selected work item, or the selected run."""
    shell = flow.shell
    screen = shell.screen
    target: dict[str, str] | None = None
    if isinstance(screen, RunScreen):
        target = {"runId": screen.run_id}
    elif isinstance(screen, MainScreen):
        if screen.active_tab == "work" and (entry := screen.work.selected()) is not None:
            target = {"runId": entry["runId"], "stepId": entry["workItem"]["stepId"]}
        elif screen.active_tab == "runs" and (run_id := screen.runs.selected_id()) is not None:
            target = {"runId": run_id}
    if target is None:
        shell.toast("Select a work item or a run to leave to you, or open a run.", severity="warning")
        return
    present(flow, "leave", target)


def stage(flow: Context) -> None:
    presenter = flow.presenter
    if presenter is None:
        return

    def chosen(name: str | None) -> None:
        if name is not None:
            present(flow, "stage", {"moment": name})

    choices = [(title, name) for name, title in presenter.moments]
    flow.shell.push_screen(ChoiceDialog("Stage which moment, on a fresh run?", choices), chosen)
