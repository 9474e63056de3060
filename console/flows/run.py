"""One run: open it (from a row, or a run id typed in the runs search), read it again and show it with
its document, each verdict's bars and its whole log, then read back every evidence file not checked
yet."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from console.client import Client
from console.client.files import FetchedFile
from console.client.run_log import RunLog, RunLogEntry
from console.client.wire import RecordedEvidence
from console.flows.shell import Context
from console.panes.evidence import READING, EvidencePane, FileCheck, check_file
from console.screens.run import RunDetail, RunScreen


async def open_run(flow: Context, run_id: str) -> None:
    screen = RunScreen(run_id, flow.permissions)
    await flow.shell.push_screen(screen)
    flow.shell.show_notices()
    await load_run(flow, screen)


async def find_run(flow: Context, run_id: str) -> None:
    """A run id typed in the runs search: open it when the server knows it, even when it is not among
    the rows loaded; else the search stays a search of the loaded rows, as the runs pane shows it."""
    answer = await flow.client.get_run(run_id)
    if answer["ok"]:
        flow.shell.main.runs.clear_search()
        await open_run(flow, run_id)


async def load_run(flow: Context, screen: RunScreen) -> None:
    """Read the run again and show it, with its document and each verdict's bars; then read back
    any evidence file not yet checked (a worker of the pane, so closing the run stops it). A run
    closed while it was being read is left alone."""
    shell, documents = flow.shell, flow.documents
    answer = await flow.client.get_run(screen.run_id)
    if not answer["ok"]:
        shell.report_error(f"run {screen.run_id}", answer)
        return
    view = answer["data"]
    name, version = view["run"]["process"], int(view["run"]["version"])
    document = await documents.get(name, version)
    bars = await documents.check_bars(name, version)
    log, note = await run_log(flow.client, screen.run_id)
    if not screen.is_attached:
        return
    await screen.show(RunDetail(view, document, bars, log, note), shell.now(), shell.palette)
    pane = screen.evidence
    unchecked = pane.unchecked()
    if unchecked and not pane.reading_files:
        pane.run_worker(check_files(flow.client, pane, unchecked), group=READING, exclusive=True)


async def run_log(client: Client, run_id: str) -> tuple[RunLog | None, str]:
    """The whole run log (every page; a run keeps at most about a thousand entries), or None
    and why not."""
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


async def check_files(client: Client, pane: EvidencePane, items: Sequence[RecordedEvidence]) -> None:
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
                fetched = await client.fetch_file(url, partial(pane.progress, item))
                result = check_file(item, fetched) if isinstance(fetched, FetchedFile) else "unreadable"
            pane.record(item, result)
    finally:
        pane.reading_files = False
    pane.redraw()
