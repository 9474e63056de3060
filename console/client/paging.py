"""Reading whole lists through the protocol's cursors, bounded so a runaway server cannot hang a refresh."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from console.client.base import Client
from console.client.envelope import Envelope

PAGE = 100
MAX_PAGES = 200
"""At most 20,000 items per list per refresh: enough for a busy org, bounded for a runaway one."""

Fetch = Callable[[str | None], Awaitable[Envelope]]


async def all_pages(
    fetch: Fetch, max_pages: int = MAX_PAGES
) -> tuple[list[dict[str, Any]], bool, Envelope | None]:
    """Follow `nextCursor` up to `max_pages`: (items, whether more are left on the server, the error if any)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(max_pages):
        answer = await fetch(cursor)
        if not answer.get("ok"):
            return items, False, answer
        items.extend(answer["data"].get("items") or [])
        cursor = answer["data"].get("nextCursor")
        if not cursor:
            return items, False, None
    return items, True, None


async def run_updates(client: Client) -> dict[str, str]:
    """When each unfinished run last changed, which is how old its open work items are.

    A person's work item carries no time of its own; the write that opened it is the run's last
    change, so `updatedAt` of an active or waiting run dates the items it holds.
    """
    updated: dict[str, str] = {}
    for state in ("active", "waiting"):
        runs, _, _ = await all_pages(lambda c, s=state: client.list_runs(state=s, limit=PAGE, cursor=c))
        updated.update({run["id"]: run["updatedAt"] for run in runs})
    return updated
