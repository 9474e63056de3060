"""Cancelling one run or every marked one: the reason asked, every run named, each answer told."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from console.client.wire import CancelResult, Envelope, Run, RunSummary
from console.flows.shell import Context, show_answer
from console.modals.common import ReasonDialog
from console.views.answer import run_state_line


def confirm_cancel(flow: Context, runs: Sequence[Run | RunSummary]) -> None:
    """Ask for the reason, naming every run it will cancel; then cancel each and show each answer."""
    if len(runs) == 1:
        run = runs[0]
        title = f"Cancel run {run['id']} ({run['process']}, {run['state']})"
    else:
        title = f"Cancel {len(runs)} marked runs"
    subject = [f"{run['id']} · {run['process']} v{run['version']} · {run['state']}" for run in runs]
    subject.append("Cancelling does not undo anything the run already caused outside the server.")
    run_ids = [run["id"] for run in runs]

    def confirmed(reason: str | None) -> None:
        if reason is not None:
            flow.shell.run_while_open(partial(cancel, flow, run_ids, reason), group="cancel")

    confirm = "Cancel run" if len(runs) == 1 else "Cancel runs"
    flow.shell.push_screen(ReasonDialog(title, subject, confirm=confirm), confirmed)


async def cancel(flow: Context, run_ids: Sequence[str], reason: str) -> None:
    """Cancel each run in turn; with several, the runs status line counts them and `esc` stops the
    rest. The answers are told even when the worker is cancelled (`esc`), which it then still is."""
    shell = flow.shell
    results: list[tuple[str, Envelope[CancelResult]]] = []
    pane = shell.main.runs if shell.main.built("runs") else None
    try:
        for run_id in run_ids:
            if len(run_ids) > 1 and pane is not None:
                pane.progress = f"cancelling {len(results) + 1:,} of {len(run_ids):,}… (esc stops)"
                pane.show_status()
            answer = await flow.client.cancel(run_id, reason)
            results.append((run_id, answer))
            if answer["ok"]:
                flow.ended_runs.cancelled_here.add(run_id)
    except BaseException:
        tell_cancelled(flow, run_ids, results)
        shell.reload_soon()
        raise
    finally:
        if pane is not None:
            pane.progress = ""
            pane.show_status()
    await shell.reload_all()
    tell_cancelled(flow, run_ids, results)


def tell_cancelled(
    flow: Context, run_ids: Sequence[str], results: Sequence[tuple[str, Envelope[CancelResult]]]
) -> None:
    """One run: its answer. Several: one line per run in the activity log (with the error code of
    each that failed), then `1 of 2 cancelled, 1 failed` on the status line; cancelled runs are
    unmarked."""
    shell = flow.shell
    if len(run_ids) == 1:
        for run_id, answer in results:
            if answer["ok"]:
                shell.toast(run_state_line(answer["data"]))  # `r_8f2… cancelled`, said once
            else:
                show_answer(shell, f"Cancel {run_id}", answer, run_state_line)
        return
    for run_id, answer in results:
        if answer["ok"]:
            shell.toast(run_state_line(answer["data"]))
        else:
            error = answer["error"]
            shell.toast(f"{run_id} not cancelled: {error['code']}: {error['message']}", severity="error")
    done = {run_id for run_id, answer in results if answer["ok"]}
    if shell.main.built("runs"):
        shell.main.runs.unmark(done)
    failed = len(results) - len(done)
    summary = f"{len(done)} of {len(run_ids)} cancelled, {failed} failed"
    if len(results) < len(run_ids):
        summary += f", stopped with {len(run_ids) - len(results)} left"
    shell.toast(summary, severity="warning" if failed or len(results) < len(run_ids) else "information")
