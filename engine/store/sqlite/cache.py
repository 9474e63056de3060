"""The writer's memory of runs: what a write reads without asking SQLite or parsing JSON again.

A run as the last write left it (or as a write read it) is kept as its document's text and its step
data, parsed: step records are replaced whole when they change, never edited in place (`Run.data`), so
a new run object can share them. A run of 1 MB of data is then neither read, parsed nor rewritten by
a write that changes one step of it.

An entry also keeps the index rows its write wrote (what the next write of the run differs from,
without deriving them again), and the run object its write saved, handed once to a later request of
the writer instead of building the run again from its document (the request that saved it, or one after it that
failed with it in hand, leaves none: the next builds it anew).

Entries are layered like the writer's transaction: what the running request wrote is kept or dropped
with its savepoint, what the batch's requests wrote is kept only when its COMMIT returned, so the cache
never shows a write the database does not hold. Any other connection's commit to the file (seen by
`PRAGMA data_version`) empties it. The server time mark the database holds is kept the same way, so a
write whose time is not past it records nothing. Least recently used runs give way past `MAX_CHARS` of data.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from engine.store.base import DerivedRows
from engine.store.state import Run

MAX_CHARS = 16_000_000
"""Step data (as stored, in characters) the cache keeps at most."""


@dataclass
class CachedRun:  # not frozen, though never edited: see `store.base`
    seq: int
    state: str
    outcome: str | None
    doc: str
    """The run's document without its step data (`Run.to_json(data=False)`)."""
    data: dict[str, dict[str, Any]]
    """Step records by step id, in the run's order; never changed once cached (a write caches a copy)."""
    chars: dict[str, int]
    """Each step record's stored length: what the cache counts against `MAX_CHARS`."""
    last_pos: int
    """The largest `run_steps.pos` of the run: a step new to its data goes after it."""
    spare: list[Run] = field(default_factory=list, compare=False)
    """The run object that was saved as this entry, until a later request takes it (`RunCache.spare`)."""
    rows: DerivedRows | None = field(default=None, compare=False)
    """The index rows the write that saved this entry wrote for it; None for a run read from SQLite."""
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = len(self.doc) + sum(self.chars.values())


class RunCache:
    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self._max = max_chars
        self._committed: OrderedDict[str, CachedRun] = OrderedDict()
        self._chars = 0
        self._batch: dict[str, CachedRun] = {}
        self._request: dict[str, CachedRun] = {}
        self._data_version: int | None = None
        self._marks = ["", "", ""]
        """The server time mark the database holds at least, as far as the writer knows ("" when it
        does not): committed, then as the batch and the running request raised it."""

    def get(self, run_id: str) -> CachedRun | None:
        for layer in (self._request, self._batch):
            if (entry := layer.get(run_id)) is not None:
                return entry
        entry = self._committed.get(run_id)
        if entry is not None:
            self._committed.move_to_end(run_id)
        return entry

    def spare(self, run_id: str) -> Run | None:
        """The run object an earlier request saved as `run_id`'s entry, handed out once; None within the
        request that saved it (it still holds the object)."""
        if run_id in self._request:
            return None
        entry = self._batch.get(run_id) or self._committed.get(run_id)
        return entry.spare.pop() if entry is not None and entry.spare else None

    def put(self, run_id: str, entry: CachedRun) -> None:
        self._request[run_id] = entry

    def saved_here(self, run_id: str) -> DerivedRows | None:
        """The index rows the running request wrote for `run_id` when it saved it already (a second
        save differs from them); None when it did not."""
        entry = self._request.get(run_id)
        return None if entry is None else entry.rows

    def clock_mark(self) -> str:
        """The server time mark the database holds at least ("" when not known): a write whose time
        is not past it has nothing to record."""
        return max(self._marks)

    def put_mark(self, mark: str) -> None:
        """The running request saw the database hold `mark` or a later one."""
        self._marks[2] = max(self._marks[2], mark)

    def release(self) -> None:
        """The running request's savepoint was released: its entries go with the batch."""
        self._batch.update(self._request)
        self._request.clear()
        self._marks[1:] = [max(self._marks[1:]), ""]

    def rollback(self) -> None:
        """The running request's savepoint was rolled back."""
        self._request.clear()
        self._marks[2] = ""

    def commit(self) -> None:
        """The batch's COMMIT returned: its entries are what the database holds."""
        self._marks = [max(self._marks), "", ""]
        for run_id, entry in self._batch.items():
            old = self._committed.pop(run_id, None)
            if old is not None:
                self._chars -= old.size
            self._committed[run_id] = entry
            self._chars += entry.size
        self._batch.clear()
        while self._chars > self._max and self._committed:
            _, old = self._committed.popitem(last=False)
            self._chars -= old.size

    def abort(self) -> None:
        """The batch was rolled back as a whole."""
        self._batch.clear()
        self._request.clear()
        self._marks[1:] = ["", ""]

    def check(self, data_version: int) -> None:
        """At the start of a batch: forget everything if another connection committed since the last."""
        if data_version != self._data_version:
            self._committed.clear()
            self._chars = 0
            self._marks[0] = ""
            self._data_version = data_version
