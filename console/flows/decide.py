"""Deciding a work item: the form beside what is decided, then what the run does now, and the queue's
cursor on the next item, as a mail client does."""

from __future__ import annotations

from console.client.wire import DecideResult, PersonWorkEntry
from console.flows.shell import Context
from console.live.lists import item_key
from console.live.paging import PAGE, all_pages
from console.modals.common import ChoiceDialog
from console.modals.decide import DecideDialog
from console.panes.work import item_kind
from console.views.answer import run_now_line
from console.views.format import one_line


def decide(flow: Context, entry: PersonWorkEntry) -> None:
    """Open the form; once decided, say what the run does now and put the queue's cursor on the
    next item."""
    shell = flow.shell
    after = shell.main.work.key_after(item_key(entry)) if shell.is_screen_installed("main") else None

    async def next_item() -> None:
        await shell.reload_all()
        if after is not None:
            shell.main.work.select(after)

    def decided(result: DecideResult | None) -> None:
        if result is not None:
            shell.toast(f"{dialog.decision} {entry['workItem']['stepId']}: {run_now_line(result)}")
            shell.run_while_open(next_item, group="reload", exclusive=True)

    dialog = DecideDialog(
        flow.client,
        entry,
        shell.palette,
        people=flow.people(),
        check_bars=flow.documents.check_bars,
        confirm_approvals=shell.config.confirm_approvals,
        now=shell.now,
    )
    shell.push_screen(dialog, decided)


async def decide_in_run(flow: Context, run_id: str, step_id: str | None) -> None:
    """Decide in this run: the caller's item at `step_id`, their only one, or ask which."""
    shell = flow.shell
    work, _, error = await all_pages(lambda c: flow.client.get_work(limit=PAGE, cursor=c))
    if error is not None:
        shell.report_error("work queue", error)
        return
    mine = [e for e in work if "workItem" in e and e["runId"] == run_id]
    at_step = [e for e in mine if e["workItem"]["stepId"] == step_id]
    if len(at_step) == 1 or len(mine) == 1:
        decide(flow, (at_step or mine)[0])
    elif not mine:
        shell.toast(f"No open work item of yours in run {run_id}.", severity="warning")
    else:

        def chosen(entry: PersonWorkEntry | None) -> None:
            if entry is not None:
                decide(flow, entry)

        choices = [
            (f"{item_kind(e)} · {e['workItem']['stepId']} · {one_line(e['workItem']['text'], 80)}", e)
            for e in mine
        ]
        shell.push_screen(ChoiceDialog(f"Decide which item of run {run_id}?", choices), chosen)
