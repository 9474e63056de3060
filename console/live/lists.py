"""What the live refresh (`console.flows.refresh`) reads and keeps: the main screen's two paged lists
with the filters they were read with, the key each row goes by, the interval and its backoff, and the
news of runs that ended.

A read asks `Lists` only for what is on screen: the first page, the pages of the rows on screen, and
(for the work queue, oldest first) one page where the list grows, so that new work is found at its
end a page a tick. The interval doubles while reads bring nothing new or the server answers `retry`,
up to `MAX_FACTOR` times the configured one, and drops back at the first change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, TypeGuard

from console.client.envelope import error_code
from console.client.wire import (
    AgentWorkEntry,
    Envelope,
    Failure,
    Json,
    ListRunsResult,
    PersonWorkEntry,
    RunState,
    RunSummary,
)
from console.live.paging import KEEP_PAGES, PAGE, Change, Page, PagedList, Window
from console.views.answer import OVER

if TYPE_CHECKING:
    from console.client import Client

MAX_FACTOR = 8
AGES_PER_TICK = 60
"""Runs read per tick to date the work items on screen (a screen's worth)."""
AGES_AT_ONCE = 16
"""Runs read side by side to date them."""
RUN_TIMES_KEPT = 2 * KEEP_PAGES * PAGE
"""Run dates kept; beyond, those of rows no longer kept are let go."""


@dataclass
class Backoff:
    """The refresh interval: the configured one, doubled on each quiet tick or `retry`, reset on change."""

    base: float
    factor: int = 1

    @property
    def seconds(self) -> float:
        return self.base * self.factor

    def after(self, *, changed: bool, retry: bool = False) -> None:
        if changed and not retry:
            self.factor = 1
        else:
            self.factor = min(self.factor * 2, MAX_FACTOR)

    def reset(self) -> None:
        self.factor = 1


def item_key(entry: PersonWorkEntry) -> str:
    """A work item's row: its run and its item, which stay the item's across reads."""
    return f"{entry['runId']}/{entry['workItem']['id']}"


def run_key(run: RunSummary) -> str:
    return run["id"]


class RunsQuery(TypedDict, total=False):
    """The `list_runs` filter the runs pane's filter bar asks for."""

    process: str
    state: RunState
    inputs: dict[str, Json]


def _person_entry(entry: AgentWorkEntry | PersonWorkEntry) -> TypeGuard[PersonWorkEntry]:
    """A person's entry (an agent's, which a person never gets, has no `workItem`)."""
    return "workItem" in entry


@dataclass
class Lists:
    """The paged lists the main screen shows, with the filters they were read with."""

    client: Client
    work_process: str | None = None
    runs_query: RunsQuery = field(default_factory=lambda: RunsQuery())
    work: PagedList[PersonWorkEntry] = field(init=False)
    runs: PagedList[RunSummary] = field(init=False)
    run_times: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Run id to (the snapshot its items were read at, the run's `updatedAt`): how old its items are."""
    updated: dict[str, str] = field(default_factory=dict)
    """Run id to the run's `updatedAt`, as `run_times` has it."""

    def __post_init__(self) -> None:
        self.work = PagedList(self._read_work, item_key)
        self.runs = PagedList(self._read_runs, run_key)

    async def _read_work(self, cursor: str | None) -> Envelope[Page[PersonWorkEntry]]:
        """A person's queue (an agent's entries, which a person never gets, are left out)."""
        answer = await self.client.get_work(limit=PAGE, cursor=cursor, process=self.work_process)
        if not answer["ok"]:
            return answer
        items = [e for e in answer["data"]["items"] if _person_entry(e)]
        return {"ok": True, "data": {"items": items, "nextCursor": answer["data"]["nextCursor"]}}

    def _read_runs(self, cursor: str | None) -> Awaitable[Envelope[ListRunsResult]]:
        return self.client.list_runs(limit=PAGE, cursor=cursor, **self.runs_query)

    def filter_work(self, process: str | None) -> bool:
        """Read the queue with another process filter from now on; whether it changed."""
        if process == self.work_process:
            return False
        self.work_process = process
        self.work.reset()
        return True

    def filter_runs(self, query: RunsQuery) -> bool:
        if query == self.runs_query:
            return False
        self.runs_query = query
        self.runs.reset()
        return True

    def forget(self) -> None:
        """Another identity: its own queue."""
        self.work.reset()
        self.run_times.clear()
        self.updated.clear()

    async def visible(
        self, pages: PagedList[Any], window: Window, *, head: bool, tail: bool = False
    ) -> tuple[bool, Failure | None]:
        """Read the first page (when `head`), the pages on screen, and (when `tail`) one read where the
        list grows: (anything changed, error). The queue is oldest first, so new work comes at its end,
        which the first page does not show once the queue is longer than a page."""
        wanted: list[int] = [0] if head or not pages.started else []
        if pages.keys and window.last >= window.first:
            wanted += range(pages.page_of(window.first), pages.page_of(window.last) + 1)
        for page in dict.fromkeys(wanted):
            failure = await pages.read(page)
            if failure is not None:
                return self._changed(pages), failure
        if tail and (pages.more or pages.pages - 1 not in wanted):
            return self._changed(pages), await pages.read_tail()
        return self._changed(pages), None

    async def wanted(self, pages: PagedList[Any], window: Window) -> Failure | None:
        """Rows scrolled to: the pages on screen that are not kept, and the next ones when near the end."""
        for page in pages.missing(window.first, window.last):
            failure = await pages.read(page)
            if failure is not None:
                return failure
        while pages.more and window.last + (window.last - window.first + 1) >= len(pages.keys):
            before = len(pages.keys)
            failure = await pages.read_next()
            if failure is not None or len(pages.keys) == before:
                return failure
        return None

    async def to_end(self, pages: PagedList[Any], progress: Callable[[int], None]) -> Failure | None:
        """Read on to the last page, telling `progress` how many rows are known after each page."""
        while pages.more:
            before = len(pages.keys)
            failure = await pages.read_next()
            if failure is not None:
                return failure
            progress(len(pages.keys))
            if len(pages.keys) == before and not pages.more:
                break
            await asyncio.sleep(0)
        return None

    async def ages(self, keys: Sequence[str]) -> bool:
        """Read `updatedAt` of the runs of these work items into `updated`, reading a run only when its
        items changed; whether a date changed.

        A work item carries no time of its own, so each run not dated yet is one `get_run`; those
        are read side by side (at most `AGES_AT_ONCE` in flight), so dating a screen of new rows
        costs about one round trip, not one per row."""
        wanted: dict[str, str] = {}
        for key in keys:
            entry = self.work.row(key)
            if entry is None:
                continue
            run_id, snapshot = entry["runId"], entry["workItem"]["snapshot"]
            known = self.run_times.get(run_id)
            if (known is None or known[0] != snapshot) and len(wanted) < AGES_PER_TICK:
                wanted.setdefault(run_id, snapshot)
        gate = asyncio.Semaphore(AGES_AT_ONCE)

        async def date(run_id: str, snapshot: str) -> None:
            async with gate:
                answer = await self.client.get_run(run_id)
            if answer["ok"]:
                at = answer["data"]["run"]["updatedAt"]
                self.run_times[run_id] = (snapshot, at)
                if self.updated.get(run_id) != at:
                    self.updated[run_id] = at
                    changed.append(run_id)

        changed: list[str] = []
        await asyncio.gather(*(date(run_id, snapshot) for run_id, snapshot in wanted.items()))
        if len(self.run_times) > RUN_TIMES_KEPT:  # only the dates of rows still kept
            kept = {entry["runId"] for entry in self.work.kept()}
            self.run_times = {run_id: at for run_id, at in self.run_times.items() if run_id in kept}
            for run_id in [run_id for run_id in self.updated if run_id not in kept]:
                del self.updated[run_id]
        return bool(changed)

    @staticmethod
    def _changed(pages: PagedList[Any]) -> bool:
        return any(is_new or before != after for before, after, is_new in pages.changes)


@dataclass
class EndedRuns:
    """News of runs that ended, from every read of the runs list, whether its tab was ever shown:
    one line for the runs that ended since the last read (`5 runs ended`, the notice log joins it with
    the reads before), so a busy server does not bury the screen."""

    cancelled_here: set[str] = field(default_factory=set)
    """Runs this console cancelled: their end is told by the cancel, not again as news."""

    def news(self, changes: Sequence[Change[RunSummary]]) -> tuple[str, int] | None:
        """The line to tell and how many runs it stands for, or None when none ended."""
        ended = [
            run
            for before, run, _ in changes
            if before is not None
            and before["state"] not in OVER
            and run["state"] in OVER
            and run["id"] not in self.cancelled_here
        ]
        self.cancelled_here -= {run["id"] for _, run, _ in changes if run["state"] in OVER}
        if not ended:
            return None
        if len(ended) == 1:
            run = ended[0]
            outcome = f": {run['outcome']}" if run["outcome"] else ""
            return f"Run {run['id']} {run['state']}{outcome} ({run['process']})", 1
        outcomes = ", ".join(run["outcome"] or run["state"] for run in ended)
        return f"{len(ended)} runs ended ({outcomes})", len(ended)


def is_retry(failure: Failure | None) -> bool:
    return failure is not None and error_code(failure) == "retry"
