"""Paging (tools.md `get_work`, `list_processes` "paged like get_work", `list_runs`; spec §4.1).

`limit`, an opaque `cursor` passed back as given, oldest first for `get_work`, every item exactly once
across pages, `nextCursor` null on the last page, and a cursor the server never issued refused as
`invalid` (bad arguments).
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.identity import Identity
from tests.conformance.conformance_support import (
    AGENT,
    FIN1,
    MEMO,
    MEMO_BIND,
    OPS,
    VENDOR,
    VENDOR_BIND,
    Server,
    vendor_at_approval,
)

GARBAGE = ["!!!", "eyJ0IjoiMSJ9", "W1tdXQ", "null", "A" * 300]


async def _pages(server: Server, who: Identity, tool: str, **arguments: Any) -> list[list[Any]]:
    pages: list[list[Any]] = []
    cursor: str | None = None
    for _ in range(50):
        extra = {"cursor": cursor} if cursor is not None else {}
        data = await server.ok(who, tool, **arguments, **extra)
        pages.append(data["items"])
        cursor = data["nextCursor"]
        if cursor is None:
            return pages
        assert isinstance(cursor, str) and cursor
    raise AssertionError("paging never ended")


async def test_agent_get_work_pages_oldest_first(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    runs = []
    for n in range(5):
        runs.append((await server.start("vendor-screening", {"vendorName": f"V{n}"}))["run"]["id"])
        server.clock.advance(minutes=1)
    pages = await _pages(server, AGENT, "get_work", limit=2)
    assert [len(p) for p in pages if p] == [2, 2, 1]
    listed = [item["runId"] for page in pages for item in page]
    assert listed == runs
    ready = [item["readySince"] for page in pages for item in page]
    assert ready == sorted(ready)
    whole = await server.ok(AGENT, "get_work")
    assert [i["runId"] for i in whole["items"]] == runs and whole["nextCursor"] is None


async def test_default_and_maximum_limits(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    for n in range(21):
        await server.start("vendor-screening", {"vendorName": f"V{n}"})
    default = await server.ok(AGENT, "get_work")
    assert len(default["items"]) == 20 and default["nextCursor"] is not None
    rest = await server.ok(AGENT, "get_work", cursor=default["nextCursor"])
    assert len(rest["items"]) == 1 and rest["nextCursor"] is None
    everything = await server.ok(AGENT, "get_work", limit=100)
    assert len(everything["items"]) == 21 and everything["nextCursor"] is None


async def test_person_get_work_pages_oldest_first(server: Server) -> None:
    runs = []
    for _ in range(3):
        runs.append((await vendor_at_approval(server))["run"]["id"])
        server.clock.advance(minutes=1)
    pages = await _pages(server, FIN1, "get_work", limit=2)
    assert [item["runId"] for page in pages for item in page] == runs
    assert [len(p) for p in pages if p] == [2, 1]


async def test_list_runs_pages_cover_every_run_once(server: Server) -> None:
    await server.publish(MEMO, MEMO_BIND)
    runs = set()
    for n in range(7):
        runs.add((await server.start("memo-writing", {"topic": f"t{n}"}))["run"]["id"])
        server.clock.advance(seconds=30)
    pages = await _pages(server, OPS, "list_runs", limit=3)
    ids = [item["id"] for page in pages for item in page]
    assert len(ids) == len(set(ids)) == 7 and set(ids) == runs
    assert max(len(p) for p in pages) == 3


async def test_list_processes_pages_cover_every_process_once(server: Server) -> None:
    names = [f"memo-{n:03d}" for n in range(60)]
    for name in names:
        await server.publish(MEMO.replace("name: memo-writing", f"name: {name}"), MEMO_BIND)
    pages = await _pages(server, AGENT, "list_processes")
    listed = [item["name"] for page in pages for item in page]
    assert sorted(listed) == names and len(listed) == len(set(listed))


@pytest.mark.parametrize("tool", ["get_work", "list_runs", "list_processes"])
async def test_a_cursor_the_server_never_issued_is_invalid(server: Server, tool: str) -> None:
    await vendor_at_approval(server)
    for who in (AGENT, FIN1):
        for cursor in GARBAGE:
            await server.refused(who, tool, "invalid", cursor=cursor)
