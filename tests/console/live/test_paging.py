"""PagedList against a list server with keyset cursors whose rows come and go between reads, and the
refresh interval's backoff."""

from __future__ import annotations

from typing import Any

from console.live.lists import Backoff
from console.live.paging import PagedList


class Server:
    """Rows in ascending order; a cursor is the last row a page ended at, as the engine's are."""

    def __init__(self, rows: list[int], page: int = 10) -> None:
        self.rows = rows
        self.page = page
        self.calls = 0
        self.fail = False

    async def fetch(self, cursor: str | None) -> Any:
        self.calls += 1
        if self.fail:
            return {"ok": False, "error": {"code": "unavailable", "message": "down", "retryable": True}}
        after = int(cursor) if cursor is not None else None
        rest = [r for r in sorted(self.rows) if after is None or r > after]
        page = rest[: self.page]
        more = len(rest) > self.page
        return {
            "ok": True,
            "data": {"items": [{"n": r} for r in page], "nextCursor": str(page[-1]) if more else None},
        }


def paged(server: Server, keep: int = 50) -> PagedList[Any]:
    return PagedList(server.fetch, lambda row: str(row["n"]), keep=keep)


def keys(rows: list[int]) -> list[str]:
    return [str(r) for r in sorted(rows)]


async def test_reads_page_by_page_to_the_end() -> None:
    server = Server(list(range(25)))
    pages = paged(server)
    assert pages.more and pages.keys == []
    await pages.read_next()
    assert pages.keys == keys(list(range(10))) and pages.more
    await pages.read_next()
    await pages.read_next()
    assert pages.keys == keys(server.rows) and not pages.more
    assert await pages.read_next() is None and server.calls == 3
    assert pages.row("24") == {"n": 24}


async def test_rows_inserted_above_push_the_page_tail_onto_the_next_page() -> None:
    server = Server(list(range(0, 50, 2)))
    pages = paged(server)
    for _ in range(3):
        await pages.read_next()
    server.rows += [-3, -1, 5]
    await pages.read(0)
    assert pages.keys == keys(server.rows), "the rows pushed off page 0 wait at the start of page 1"
    assert pages.row("16") is not None
    await pages.read(1)
    assert pages.keys == keys(server.rows)


async def test_rows_that_left_page_zero_pull_rows_up_without_duplicates() -> None:
    server = Server(list(range(30)))
    pages = paged(server)
    for _ in range(3):
        await pages.read_next()
    server.rows = [r for r in server.rows if r not in (1, 2, 3)]
    await pages.read(0)
    assert pages.keys == keys(server.rows)
    assert pages.row("1") is None


async def test_a_last_page_that_overflows_is_read_again_before_going_on() -> None:
    server = Server(list(range(0, 40, 2)))
    pages = paged(server)
    await pages.read_next()
    server.rows += [-1]
    await pages.read(0)
    assert pages.keys == keys(server.rows)[:11] and pages.more
    await pages.read_next()
    await pages.read_next()
    assert pages.keys == keys(server.rows) and not pages.more


async def test_the_end_moves_up_when_rows_go() -> None:
    server = Server(list(range(25)))
    pages = paged(server)
    for _ in range(3):
        await pages.read_next()
    server.rows = list(range(8))
    await pages.read(0)
    assert pages.keys == keys(server.rows) and pages.pages == 1 and not pages.more


async def test_only_the_kept_pages_hold_rows_and_a_missing_page_is_read_again() -> None:
    server = Server(list(range(50)))
    pages = paged(server, keep=2)
    for _ in range(5):
        await pages.read_next()
    assert len(pages.keys) == 50
    assert [r["n"] for r in pages.rows()] == list(range(30, 50))
    assert pages.missing(5, 34) == [0, 1, 2]
    assert pages.missing(45, 49) == []
    await pages.read(0)
    assert pages.row("3") == {"n": 3} and pages.row("30") is None
    assert pages.keys == keys(server.rows)


async def test_rows_pushed_onto_a_page_not_kept_are_let_go_with_it() -> None:
    server = Server(list(range(0, 60, 2)))
    pages = paged(server, keep=2)
    for _ in range(3):
        await pages.read_next()
    await pages.read(0)  # kept: pages 2 and 0
    server.rows += [5, 7]
    await pages.read(0)
    assert pages.keys == keys(server.rows)
    assert pages.row("16") is None and pages.row("18") is None, "pushed onto page 1, which is not kept"
    assert len(pages.kept()) == 20 and pages.missing(10, 11) == [1]


async def test_a_failed_read_changes_nothing() -> None:
    server = Server(list(range(15)))
    pages = paged(server)
    await pages.read_next()
    server.fail = True
    failure = await pages.read_next()
    assert failure is not None and not failure["ok"]
    assert pages.keys == keys(list(range(10))) and pages.more


async def test_each_read_says_what_it_brought() -> None:
    server = Server(list(range(15)))
    pages = paged(server)
    await pages.read_next()
    assert pages.take_changes() == [], "a page read for the first time brings rows first seen"
    server.rows = [-1, *server.rows]
    await pages.read(0)
    changes = pages.take_changes()
    assert [(after["n"], new) for _, after, new in changes] == [(-1, True)] + [(n, False) for n in range(9)]
    assert changes[1][0] == {"n": 0}, "a row read again comes with the row as it was"


async def test_the_tail_finds_the_end_a_page_a_read_then_brings_rows_that_come_after_it() -> None:
    server = Server(list(range(25)))
    pages = paged(server)
    await pages.read_next()
    await pages.read_tail()
    assert pages.pages == 2 and pages.more and not pages.end_seen
    await pages.read_tail()
    assert pages.keys == keys(server.rows) and pages.end_seen
    assert pages.take_changes() == [], "rows read on the way to the end are not new"
    server.rows += [25, 26]
    await pages.read_tail()
    assert server.calls == 4, "the last page, read again"
    changes = pages.take_changes()
    assert [(after["n"], new) for _, after, new in changes] == [(n, n > 24) for n in range(20, 27)]
    assert pages.keys == keys(server.rows) and not pages.more


async def test_rows_that_come_past_a_full_last_page_are_new_on_the_page_after_it() -> None:
    server = Server(list(range(20)))
    pages = paged(server)
    await pages.read_next()
    await pages.read_tail()
    assert pages.end_seen and pages.take_changes() == []
    server.rows += [20, 21]
    await pages.read_tail()
    assert server.calls == 4, "the last page again, which now has a next one, and that one"
    changes = pages.take_changes()
    assert [(after["n"], new) for _, after, new in changes if new] == [(20, True), (21, True)]
    assert pages.keys == keys(server.rows) and pages.pages == 3 and not pages.more


def test_the_interval_doubles_while_nothing_changes_and_drops_back_on_a_change() -> None:
    backoff = Backoff(2.0)
    seconds = []
    for changed in (False, False, False, False, True, False):
        backoff.after(changed=changed)
        seconds.append(backoff.seconds)
    assert seconds == [4.0, 8.0, 16.0, 16.0, 2.0, 4.0]
    backoff.after(changed=True, retry=True)
    assert backoff.seconds == 8.0, "a server answering retry is given time even when something changed"
    backoff.reset()
    assert backoff.seconds == 2.0
