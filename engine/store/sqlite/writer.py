"""The one writer of a SQLite store: write requests, group-committed.

A write request is an async function of a transaction. The writer runs the pending requests one after
another on the event loop, each inside its own SAVEPOINT of one open transaction, so each sees what the
ones before it left; a request that raises has only its savepoint rolled back, and its exception goes
to its caller. The first request of a transaction needs no savepoint (two statements fewer for a lone
write): if it raises, the transaction is rolled back whole, and the requests after it begin another.
Then one COMMIT (one fsync under `synchronous=FULL`) makes the whole batch durable, and only then is
every caller answered. A request that arrives while the writer is idle starts at once: no
request waits for company, only for the batch in front of it.

The statements run directly on the connection (no thread hop each: SQLite serves them from its page
cache in microseconds). The COMMIT waits on the disk: while commits take less than `INLINE_COMMIT_MS`
(a local disk's fsync, a fraction of a millisecond, a few when it is busy) it runs on the event loop's
thread too, because the hop to a thread and back costs as much again, and a batch's own work holds the
loop longer anyway; once they take longer (a network or spinning disk) it runs on the writer's own
thread, so the event loop keeps serving while the disk works. Checkpoints (copying the WAL back into
the database file, which SQLite would otherwise do inside some COMMITs) run on that thread over a
connection of their own, beside the writes, never inside a COMMIT; before the next transaction, the
writer copies on that thread what was committed meanwhile, so the WAL starts over and stays a few MB.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from engine.store.sqlite.cache import RunCache

T = TypeVar("T")
Tx = TypeVar("Tx")

MAX_BATCH = 512
"""Requests in one transaction at most, so one batch never holds its callers for long."""
BUSY_MS = 5000
"""How long BEGIN waits for another connection's write lock (another process on the same file)."""
INLINE_COMMIT_MS = 5.0
"""A COMMIT runs on the event loop's thread while commits take less than this (a moving average):
about what ten requests of a batch take to run."""
CHECKPOINT_EVERY = 400
"""Requests committed between two checkpoints. Each checkpoint ends with the writer waiting for the
catch-up (it syncs the database file), so they are not made often; often enough that the WAL between
two stays a few megabytes (batched requests leave fewer pages than lone ones: a batch writes a page
once)."""


@dataclass
class WriterStats:
    """What the writer did since it opened: commits made, requests answered in them."""

    commits: int = 0
    requests: int = 0
    largest_batch: int = 0


@dataclass
class _Request(Generic[T]):
    fn: Callable[[Any], Awaitable[T]]
    future: asyncio.Future[T]


class Writer(Generic[Tx]):
    """Owns `conn` (autocommit mode: the writer says BEGIN and COMMIT itself); `make_tx` gives each
    request a transaction object of its own over that connection."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        make_tx: Callable[[sqlite3.Connection], Tx],
        checkpointer: sqlite3.Connection | None = None,
        cache: RunCache | None = None,
    ) -> None:
        self._conn = conn
        self._make_tx = make_tx
        self._cache = RunCache() if cache is None else cache
        """What the requests keep beside the database, kept and dropped with their savepoints."""
        self._queue: deque[_Request[Any]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer")
        self._closed = False
        self._commit_ms = 0.0
        """Moving average of the COMMITs' durations: inline while it stays under INLINE_COMMIT_MS."""
        self._checkpointer = checkpointer
        self._checkpoint: asyncio.Future[None] | None = None
        self._uncheckpointed = 0
        self._kept = False
        """Whether a request of the open transaction was kept: the next one needs a savepoint."""
        self.stats = WriterStats()

    @property
    def pending(self) -> int:
        """Requests queued and not yet started."""
        return len(self._queue)

    async def write(self, fn: Callable[[Tx], Awaitable[T]]) -> T:
        if self._closed:
            raise RuntimeError("the store is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(fn, future))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def close(self) -> None:
        """Finish what is queued, then stop; the connection is the caller's to close."""
        self._closed = True
        if self._task is not None:
            await self._task
        if self._checkpoint is not None:
            with contextlib.suppress(sqlite3.Error):
                await self._checkpoint
        self._thread.shutdown(wait=True)

    async def _drain(self) -> None:
        while self._queue:
            await self._batch()

    async def _batch(self) -> None:
        answers: list[tuple[asyncio.Future[Any], BaseException | None, Any]] = []
        try:
            await self._begin()
        except Exception as exc:  # nothing can be written now: every waiting caller hears why
            self._rollback()
            while self._queue:
                future = self._queue.popleft().future
                if not future.done():
                    future.set_exception(exc)
            return
        try:
            # Requests that arrive while earlier ones run join this batch (up to MAX_BATCH).
            while self._queue and len(answers) < MAX_BATCH:
                request = self._queue.popleft()
                if request.future.cancelled():
                    continue
                answers.append(await self._one(request))
            await self._commit()
        except BaseException as exc:  # the transaction failed as a whole: nobody's write is kept
            self._rollback()
            self._cache.abort()
            for future, _, _ in answers:
                if future.done():
                    continue
                if isinstance(exc, Exception):
                    future.set_exception(exc)
                else:
                    future.cancel()
            if not isinstance(exc, Exception):
                raise
            return
        self._cache.commit()
        self.stats.commits += 1
        self.stats.requests += len(answers)
        self.stats.largest_batch = max(self.stats.largest_batch, len(answers))
        self._maybe_checkpoint(len(answers))
        for future, error, result in answers:
            if future.done():
                continue
            if error is None:
                future.set_result(result)
            elif isinstance(error, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(error)

    async def _one(self, request: _Request[T]) -> tuple[asyncio.Future[T], BaseException | None, Any]:
        if not self._conn.in_transaction:  # the request before it, first of the transaction, failed
            await self._begin()
        first = not self._kept
        if not first:
            self._conn.execute("SAVEPOINT request")
        try:
            result = await request.fn(self._make_tx(self._conn))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # a CancelledError too: it is this request's, not the writer's
            if first:
                self._rollback()
            else:
                self._conn.execute("ROLLBACK TO request")
                self._conn.execute("RELEASE request")
            self._cache.rollback()
            return request.future, exc, None
        if not first:
            self._conn.execute("RELEASE request")
        self._kept = True
        self._cache.release()
        return request.future, None, result

    async def _commit(self) -> None:
        def commit() -> float:
            started = time.perf_counter()
            self._conn.execute("COMMIT")
            return (time.perf_counter() - started) * 1000

        if not self._conn.in_transaction:  # its only request failed: nothing to commit
            return
        if self._commit_ms < INLINE_COMMIT_MS:
            took = commit()
        else:
            took = await asyncio.get_running_loop().run_in_executor(self._thread, commit)
        self._commit_ms = 0.8 * self._commit_ms + 0.2 * took

    def _maybe_checkpoint(self, requests: int) -> None:
        """Start a checkpoint on the writer's thread once enough has been committed since the last one;
        a PASSIVE checkpoint never waits for the writer, nor the writer for it."""
        self._uncheckpointed += requests
        if self._checkpointer is None or self._uncheckpointed < CHECKPOINT_EVERY:
            return
        if self._checkpoint is not None and not self._checkpoint.done():
            return
        self._uncheckpointed = 0
        self._checkpoint = asyncio.get_running_loop().run_in_executor(
            self._thread, _checkpoint, self._checkpointer
        )

    async def _begin(self) -> None:
        self._kept = False
        if self._checkpoint is not None and self._checkpoint.done():
            self._checkpoint = None
            # It copied the WAL as it stood when it started; the few commits since are copied now, the
            # writer idle, so the whole WAL is in the database file and this transaction starts it
            # over from its beginning (SQLite restarts a WAL only then). Else the WAL grows without
            # end and every commit, extending the file, syncs its inode too.
            await asyncio.get_running_loop().run_in_executor(self._thread, _checkpoint, self._conn)
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            # Another connection holds the write lock: wait for it off the event loop.
            await self._off_thread(("BEGIN IMMEDIATE",), busy_ms=BUSY_MS)
        self._cache.check(self._conn.execute("PRAGMA data_version").fetchone()[0])

    async def _off_thread(self, statements: tuple[str, ...], busy_ms: int = 0) -> None:
        def run() -> None:
            if busy_ms:
                self._conn.execute(f"PRAGMA busy_timeout={busy_ms}")
            try:
                for sql in statements:
                    self._conn.execute(sql)
            finally:
                if busy_ms:
                    self._conn.execute("PRAGMA busy_timeout=0")

        await asyncio.get_running_loop().run_in_executor(self._thread, run)

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy what it can of the WAL into the database file; one that cannot (busy, I/O) is tried again
    at the next, and SQLite checkpoints on the last close anyway."""
    with contextlib.suppress(sqlite3.Error):
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
