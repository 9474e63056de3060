"""Starting a run: which process (when not chosen in the processes tab), its inputs, then the new run
opened."""

from __future__ import annotations

from console.client.wire import ProcessSummary, StartRunResult
from console.flows.shell import Context
from console.live.paging import all_pages
from console.modals.common import AnswerDialog, ChoiceDialog
from console.modals.start import StartRunDialog
from console.views.answer import run_state_line


async def choose_process(flow: Context) -> None:
    shell = flow.shell
    processes, _, error = await all_pages(lambda c: flow.client.list_processes(cursor=c))
    if error is not None:
        shell.push_screen(AnswerDialog("Processes", error))
        return
    choices = [(f"{p['name']} v{p['version']} · {p['description']}", p) for p in processes]

    def chosen(process: ProcessSummary | None) -> None:
        if process is not None:
            start_run(flow, process)

    shell.push_screen(ChoiceDialog("Start a run of which process?", choices), chosen)


def start_run(flow: Context, process: ProcessSummary) -> None:
    shell = flow.shell

    def started(view: StartRunResult | None) -> None:
        if view is not None:
            shell.toast(f"Started {process['name']}: {run_state_line(view)}")
            shell.reload_soon()
            shell.open_run(view["run"]["id"])

    dialog = StartRunDialog(flow.client, process, shell.palette, people=flow.people())
    shell.push_screen(dialog, started)
