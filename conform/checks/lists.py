"""Paging and filters of the reads that list (tools.md get_work, list_processes, list_runs; spec §4.1).

A page holds at most `limit` items, an opaque cursor is passed back as given, `nextCursor` is null on
the last page, and every item appears once. The server may hold other runs than the runner's, so
checks page through everything and look at their own runs: in order, once each.
"""

from __future__ import annotations

import uuid
from typing import Any

from conform.checks.common import vendor_at_approval
from conform.config import Actor
from conform.expect import equal, fail, true
from conform.registry import check
from conform.session import Session

GARBAGE = ["!!!", "eyJ0IjoiMSJ9", "W1tdXQ", "null", "A" * 300]


async def _pages(s: Session, who: Actor, tool: str, **arguments: Any) -> list[list[Any]]:
    pages: list[list[Any]] = []
    cursor: str | None = None
    for _ in range(10_000):
        extra = {"cursor": cursor} if cursor is not None else {}
        data = await s.ok(who, tool, **arguments, **extra)
        pages.append(data["items"])
        cursor = data["nextCursor"]
        if cursor is None:
            return pages
        true(
            isinstance(cursor, str) and bool(cursor),
            f"{tool}: nextCursor must be a non-empty string or null, got {cursor!r}",
        )
    fail(f"{tool}: paging did not end")


def _within(pages: list[list[Any]], limit: int, tool: str) -> None:
    sizes = [len(p) for p in pages]
    true(all(size <= limit for size in sizes), f"{tool} with limit {limit}: page sizes {sizes}")


async def _queue(s: Session, count: int) -> list[str]:
    return [(await s.start("conform-queue", {"n": n}))["run"]["id"] for n in range(count)]


@check("lists.agent-work", "tools.md get_work (oldest first, paged)")
async def agent_work(s: Session) -> None:
    runs = await _queue(s, 5)
    pages = await _pages(s, s.agent, "get_work", process="conform-queue", limit=2)
    _within(pages, 2, "get_work")
    listed = [item for page in pages for item in page]
    equal("the runs' items across pages, in order", [i["runId"] for i in listed if i["runId"] in runs], runs)
    ready = [i["readySince"] for i in listed]
    equal("readySince across pages", ready, sorted(ready))


@check("lists.default-limit", "tools.md get_work (limit 1-100, default 20)")
async def default_limit(s: Session) -> None:
    runs = await _queue(s, 21)
    first = await s.ok(s.agent, "get_work", process="conform-queue")
    equal("items on a default page with more than 20 ready", len(first["items"]), 20)
    true(first["nextCursor"] is not None, "nextCursor: expected a cursor with more than 20 items ready")
    everything = await s.everything(s.agent, "get_work", process="conform-queue", limit=100)
    equal("the runs' items with limit 100", [i["runId"] for i in everything if i["runId"] in runs], runs)


@check("lists.person-work", "tools.md get_work (called by a person: oldest first, paged)")
async def person_work(s: Session) -> None:
    runs = [(await vendor_at_approval(s))["run"]["id"] for _ in range(3)]
    pages = await _pages(s, s.person1, "get_work", process="conform-vendor", limit=2)
    _within(pages, 2, "get_work")
    equal(
        "the runs' items across pages, in order",
        [i["runId"] for p in pages for i in p if i["runId"] in runs],
        runs,
    )


@check("lists.runs", "tools.md list_runs (paged)")
async def runs(s: Session) -> None:
    mine = [(await s.start("conform-memo", {"topic": f"t{n}"}))["run"]["id"] for n in range(7)]
    pages = await _pages(s, s.operator, "list_runs", process="conform-memo", limit=3)
    _within(pages, 3, "list_runs")
    ids = [item["id"] for page in pages for item in page]
    true(len(ids) == len(set(ids)), "list_runs: a run listed on two pages")
    equal("the runs found across pages", sorted(i for i in ids if i in mine), sorted(mine))


@check(
    "lists.bad-cursor",
    "tools.md get_work, list_runs, list_processes (cursors are opaque)",
    covers=("get_work/invalid", "list_runs/invalid", "list_processes/invalid"),
)
async def bad_cursor(s: Session) -> None:
    """A cursor the server never issued is `invalid`."""
    for tool in ("get_work", "list_runs", "list_processes"):
        for who in (s.agent, s.person1):
            for cursor in GARBAGE:
                await s.refused(who, tool, "invalid", cursor=cursor)


@check("lists.run-summary", "tools.md list_runs")
async def run_summary(s: Session) -> None:
    tag = str(uuid.uuid4())
    view = await s.start("conform-flex", {"tag": tag, "amount": 48000})
    for who in (s.agent, s.outsider):
        listed = await s.everything(who, "list_runs", process="conform-flex", inputs={"tag": tag})
        run = view["run"]
        equal(
            f"list_runs as {who.name}",
            listed,
            [
                {
                    "id": run["id"],
                    "process": "conform-flex",
                    "version": run["version"],
                    "state": "active",
                    "outcome": None,
                    "startedAt": run["startedAt"],
                    "updatedAt": run["updatedAt"],
                    "inputs": {"tag": tag, "amount": 48000},
                }
            ],
        )


@check("lists.filter-state", "spec §4.2 list_runs (filter by process and state)")
async def filter_state(s: Session) -> None:
    tag = str(uuid.uuid4())
    inputs = {"tag": tag}
    active = (await s.start("conform-flex", inputs))["run"]["id"]
    waiting = (await s.start("conform-flex", inputs))["run"]["id"]
    await s.work(waiting, "work", {})
    ended = (await s.start("conform-flex", inputs))["run"]["id"]
    view = await s.work(ended, "work", {})
    await s.decide(s.person1, view, "sign", "approved")
    cancelled = (await s.start("conform-flex", inputs))["run"]["id"]
    await s.ok(s.operator, "cancel", runId=cancelled, reason="No.")
    for state, expected in (
        ("active", active),
        ("waiting", waiting),
        ("ended", ended),
        ("cancelled", cancelled),
    ):
        found = [
            i["id"]
            for i in await s.everything(
                s.operator, "list_runs", process="conform-flex", state=state, inputs=inputs, limit=100
            )
        ]
        equal(f"runs in state {state}", found, [expected])
    every = {
        i["id"]
        for i in await s.everything(s.operator, "list_runs", process="conform-flex", inputs=inputs, limit=100)
    }
    equal("runs of any state", sorted(every), sorted([active, waiting, ended, cancelled]))
    none = await s.everything(s.operator, "list_runs", process="conform-queue", inputs=inputs, limit=100)
    equal("the runs under another process", none, [])
    ended_item = [
        i
        for i in await s.everything(
            s.operator, "list_runs", process="conform-flex", state="ended", inputs=inputs
        )
    ]
    equal("outcome of the ended run", [(i["state"], i["outcome"]) for i in ended_item], [("ended", "done")])


EQUALITY: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
    ({"amount": 48000}, {"amount": 48000}, True),
    ({"amount": 48000}, {"amount": 48000.0}, True),
    ({"amount": 48000.5}, {"amount": 48000.5}, True),
    ({"amount": 48000}, {"amount": "48000"}, False),
    ({"amount": 1}, {"amount": True}, False),
    ({"urgent": True}, {"urgent": 1}, False),
    ({"urgent": True}, {"urgent": "true"}, False),
    ({"urgent": False}, {"urgent": False}, True),
    ({"urgent": False}, {"urgent": 0}, False),
    ({"code": "007"}, {"code": "007"}, True),
    ({"code": "007"}, {"code": 7}, False),
    ({"code": "Acme"}, {"code": "acme"}, False),
    ({"tags": ["a", "b"]}, {"tags": ["a", "b"]}, True),
    ({"tags": ["a", "b"]}, {"tags": ["b", "a"]}, False),
    ({"meta": {"x": 1, "y": [True]}}, {"meta": {"y": [True], "x": 1.0}}, True),
    ({"meta": {"x": 1}}, {"meta": {"x": 1, "y": 2}}, False),
    ({}, {"amount": 48000}, False),
    ({"amount": 5, "urgent": True}, {"amount": 5, "urgent": True}, True),
    ({"amount": 5, "urgent": True}, {"amount": 5, "urgent": False}, False),
    ({"amount": 5}, {"amount": 5, "code": "x"}, False),
]


@check("lists.filter-inputs", "spec §4.2 list_runs (any input field); tools.md list_runs (equality)")
async def filter_inputs(s: Session) -> None:
    """JSON equality: 48000 is 48000.0, never "48000" or true; lists in order; objects by members."""
    wrong = []
    for stored, query, matches in EQUALITY:
        tag = str(uuid.uuid4())
        target = (await s.start("conform-flex", {"tag": tag, **stored}))["run"]["id"]
        other = (await s.start("conform-flex", {"tag": tag, "code": "other"}))["run"]["id"]
        found = [
            i["id"]
            for i in await s.everything(
                s.operator, "list_runs", process="conform-flex", inputs={"tag": tag, **query}, limit=100
            )
        ]
        if found != ([target] if matches else []):
            wrong.append(
                f"stored {stored}, filter {query}: expected {'a match' if matches else 'none'}, got {len(found)}"
            )
        both = {
            i["id"]
            for i in await s.everything(
                s.operator, "list_runs", process="conform-flex", inputs={"tag": tag}, limit=100
            )
        }
        if both != {target, other}:
            wrong.append(f"filter on the tag alone: expected both runs, got {len(both)}")
    if wrong:
        fail("; ".join(wrong))
