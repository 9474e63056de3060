"""Reading whole lists through the protocol's cursors, bounded so a runaway server cannot hang a refresh."""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, TypedDict, TypeVar

from console.client.wire import Envelope, Failure

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


@dataclass(frozen=True)
class Window:
    """The rows on screen, first to last (inclusive); last < first when the table is empty: what a
    table shows, and so which pages a list reads."""

    first: int
    last: int


KEEP_PAGES = 50
"""Pages whose rows are kept (5,000 rows): the keys of every page read stay, the rows of the rest go."""

Change = tuple[T | None, T, bool]
Fetch = Callable[[str | None], Awaitable[Envelope[Page[T]]]]


class PagedList(Generic[T]):
    """A server list read page by page as the view needs it, in the server's order.

    It keeps the key of every row read, the rows of at most `keep` pages (the least recently used
    go; their rows show as not loaded until read again), and the cursor each page was read with, so
    any page can be read again on its own. Reading a page again splices what it answers in place of
    what it held: rows that left go, rows that came are inserted, and rows pushed past the page's end
    move to the start of the next page until that one is read again.
    """

    def __init__(self, fetch: Fetch[T], key: Callable[[T], str], *, keep: int = KEEP_PAGES) -> None:
        self._fetch = fetch
        self._key = key
        self._keep = max(1, keep)
        self.reset()

    def reset(self) -> None:
        """Forget everything read (the filter changed)."""
        self.keys: list[str] = []
        self._starts: list[int] = []
        self._cursors: list[str | None] = []
        self._resident: OrderedDict[int, list[str]] = OrderedDict()
        self._rows: dict[str, T] = {}
        self._next: str | None = None
        self._unfinished = False
        """The last page holds rows pushed out of the one before and must be read again before going on."""
        self.started = False
        self.end_seen = False
        """The server's last page has been read: rows on a page read for the first time after that came
        since (the list grew past the end it had), so they are new, not rows first seen."""
        self.changes: list[Change[T]] = []

    @classmethod
    def whole(cls, items: list[T], key: Callable[[T], str]) -> PagedList[T]:
        """A list read whole elsewhere (tests, small lists)."""

        async def nothing(cursor: str | None) -> Envelope[Page[T]]:
            return {"ok": True, "data": {"items": [], "nextCursor": None}}

        made = cls(nothing, key)
        made.replace(items)
        return made

    @property
    def pages(self) -> int:
        return len(self._starts)

    @property
    def more(self) -> bool:
        """Whether the server holds rows after the last one read (true until the first page is read)."""
        return not self.started or self._next is not None or self._unfinished

    def row(self, key: str) -> T | None:
        """The row, when its page is kept."""
        return self._rows.get(key)

    def kept(self) -> list[T]:
        """Every kept row, in no particular order (cheaper than `rows`)."""
        return list(self._rows.values())

    def rows(self) -> list[T]:
        """Every kept row, in the server's order."""
        return [row for key in self.keys if (row := self._rows.get(key)) is not None]

    def page_of(self, index: int) -> int:
        return max(0, bisect_right(self._starts, index) - 1)

    def _end(self, page: int) -> int:
        return self._starts[page + 1] if page + 1 < len(self._starts) else len(self.keys)

    def missing(self, first: int, last: int) -> list[int]:
        """Pages holding rows first..last whose rows are not kept."""
        if not self.keys or last < first:
            return []
        pages = range(self.page_of(first), self.page_of(min(last, len(self.keys) - 1)) + 1)
        return [page for page in pages if page not in self._resident]

    async def read_next(self) -> Failure | None:
        """Read the page after the last one read (the first one at the start)."""
        if not self.started:
            return await self._read(0, None)
        if self._unfinished:
            return await self.read(len(self._starts) - 1)
        if self._next is None:
            return None
        return await self._read(len(self._starts), self._next)

    async def read(self, page: int) -> Failure | None:
        """Read one page again with the cursor it was read with."""
        if page >= len(self._starts):
            return await self.read_next()
        return await self._read(page, self._cursors[page])

    async def _read(self, page: int, cursor: str | None) -> Failure | None:
        answer = await self._fetch(cursor)
        if not answer["ok"]:
            return answer
        self.apply(page, cursor, answer["data"]["items"], answer["data"]["nextCursor"])
        return None

    async def read_tail(self) -> Failure | None:
        """One read where a list in the server's oldest-first order grows: the last page again when its
        end has been seen, and the page after it when that read found the list grew past it; else the
        next page toward the end (one read a call, so a long list's end is found a page at a time)."""
        if self.end_seen and not self.more:
            failure = await self.read(len(self._starts) - 1)
            if failure is not None or not self.more:
                return failure
        return await self.read_next()

    def replace(self, items: list[T]) -> None:
        """Take a list read whole, as if it were one page with nothing after it."""
        self.apply(0, None, items, None)

    def apply(self, page: int, cursor: str | None, items: list[T], next_cursor: str | None) -> None:
        """Splice one page's answer in (see the class)."""
        self.started = True
        fresh = [self._key(item) for item in items]
        fresh_set = set(fresh)
        first_read = page >= len(self._starts)
        if first_read:
            page = len(self._starts)
            self._starts.append(len(self.keys))
            self._cursors.append(cursor)
            old: list[str] = []
        else:
            old = self.keys[self._starts[page] : self._end(page)]
        following = self.keys[self._end(page) : self._end(page + 1)] if page + 1 < len(self._starts) else []
        known = set(old) | set(following)
        if first_read and self.end_seen:  # past the end already read: rows that came since
            known = set(self.keys)
        if not first_read or self.end_seen:  # else rows first seen (the first read, `G`), not changes
            self.changes.extend(
                (self._rows.get(key), item, key not in known) for key, item in zip(fresh, items, strict=True)
            )
        pushed = [] if next_cursor is None else _tail_after(old, fresh, fresh_set)
        self._splice(page, fresh)
        for key, item in zip(fresh, items, strict=True):
            self._rows[key] = item
        moved = set(pushed)
        for gone in old:
            if gone not in fresh_set and gone not in moved:
                self._rows.pop(gone, None)
        self._resident[page] = fresh
        self._resident.move_to_end(page)
        last = page == len(self._starts) - 1
        if next_cursor is None:
            self.end_seen = True
            self._truncate(page)
            self._next, self._unfinished = None, False
        elif last:
            self._next = next_cursor
            self._unfinished = False
            if pushed:
                self._starts.append(len(self.keys))
                self._cursors.append(next_cursor)
                self.keys.extend(pushed)
                self._resident[page + 1] = pushed
                self._unfinished = True
        else:
            self._cursors[page + 1] = next_cursor
            self._settle_next(page, fresh_set, pushed)
        self._evict()

    def more_on_server(self) -> None:
        """A list read whole but cut short: the server said there is more (no cursor to read it with)."""
        self._unfinished = True

    def take_changes(self) -> list[Change[T]]:
        """Rows read again since the last call: (the row as kept before or None, the row now, whether it
        is new there). Rows of a page read for the first time are not changes: the initial read, `G`
        and scrolling on bring rows first seen, which are neither new nor changed."""
        changes, self.changes = self.changes, []
        return changes

    def _splice(self, page: int, fresh: list[str]) -> None:
        start, end = self._starts[page], self._end(page)
        self.keys[start:end] = fresh
        delta = len(fresh) - (end - start)
        if delta:
            for later in range(page + 1, len(self._starts)):
                self._starts[later] += delta

    def _truncate(self, page: int) -> None:
        """The server ended at this page: every later page is gone."""
        end = self._end(page)
        for later in range(page + 1, len(self._starts)):
            for key in self._resident.pop(later, []):
                self._rows.pop(key, None)
        del self._starts[page + 1 :], self._cursors[page + 1 :], self.keys[end:]

    def _settle_next(self, page: int, fresh: set[str], pushed: list[str]) -> None:
        """The next page loses rows now read on this one and starts with the rows pushed off this one."""
        following = page + 1
        start, end = self._starts[following], self._end(following)
        kept = [key for key in self.keys[start:end] if key not in fresh]
        moved = [key for key in pushed if key not in kept]
        self._splice(following, moved + kept)
        if following in self._resident:
            self._resident[following] = moved + kept
        else:  # the next page's rows are not kept: neither are the rows that moved onto it
            for key in moved:
                self._rows.pop(key, None)

    def _evict(self) -> None:
        while len(self._resident) > self._keep:
            _, keys = self._resident.popitem(last=False)
            for key in keys:
                self._rows.pop(key, None)


def _tail_after(old: list[str], fresh: list[str], fresh_set: set[str]) -> list[str]:
    """Rows of the page as it was that now come after its end: those after the last row it still holds."""
    if not fresh:
        return []
    try:
        last = old.index(fresh[-1])
    except ValueError:
        return []
    return [key for key in old[last + 1 :] if key not in fresh_set]


class KeptRows(Mapping[str, T]):
    """The rows of a paged list that are kept, by key (rows of pages let go are not in it)."""

    def __init__(self, pages: PagedList[T]) -> None:
        self.pages = pages

    def __getitem__(self, key: str) -> T:
        row = self.pages.row(key)
        if row is None:
            raise KeyError(key)
        return row

    def __iter__(self) -> Iterator[str]:
        return (key for key in self.pages.keys if self.pages.row(key) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)
