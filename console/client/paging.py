"""Reading whole lists through the protocol's cursors, bounded so a runaway server cannot hang a refresh."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypedDict, TypeVar

from console.client.base import Client
from console.client.wire import Envelope, Failure, ListRunsResult, RunState

PAGE = 100
MAX_PAGES = 200
"""At most 20,000 items per list per refresh: enough for a busy org, bounded for a runaway one."""

T = TypeVar("T")


class Page(TypedDict, Generic[T]):
    """What every listing tool answers (`get_work`, `list_runs`, `list_processes`): items and a cursor."""

    items: list[T]
    nextCursor: str | None


async def all_pages(
    fetch: Callable[[str | None], Awaitable[Envelope[Page[T]]]], max_pages: int = MAX_PAGES
) -> tuple[list[T], bool, Failure | None]:
    """Follow `nextCursor` up to `max_pages`: (items, whether more are left on the server, the error if any)."""
    items: list[T] = []
    cursor: str | None = None
    for _ in range(max_pages):
        answer = await fetch(cursor)
        if not answer["ok"]:
            return items, False, answer
        items.extend(answer["data"]["items"])
        cursor = answer["data"]["nextCursor"]
        if not cursor:
            return items, False, None
    return items, True, None


async def run_updates(client: Client) -> dict[str, str]:
    """When each unfinished run last changed, which is how old its open work items are.

    A person's work item carries no time of its own; the write that opened it is the run's last
    change, so `updatedAt` of an active or waiting run dates the items it holds.
    """
    updated: dict[str, str] = {}
    unfinished: tuple[RunState, ...] = ("active", "waiting")
    for state in unfinished:

        def fetch(cursor: str | None, state: RunState = state) -> Awaitable[Envelope[ListRunsResult]]:
            return client.list_runs(state=state, limit=PAGE, cursor=cursor)

        runs, _, _ = await all_pages(fetch)
        updated.update({run["id"]: run["updatedAt"] for run in runs})
    return updated
