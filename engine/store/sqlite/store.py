"""SQLite persistence: WAL, `synchronous=FULL`, one writer and one reader connection.

A transaction is one write request (`SqliteStore.write(fn)`): `fn` makes all of one tool call's
changes (the run, its index rows, notifications, the idempotency record) through the
`Transaction` it is handed, and they are kept all together or not at all. Requests are group-committed
(`writer`): each runs in its own SAVEPOINT of a shared transaction (the first in the
transaction itself), after the requests queued before it and seeing their changes; a request that
raises is rolled back alone. A caller is answered
only after the COMMIT holding its request has returned, and FULL makes every COMMIT fsync the WAL,
so an acknowledged write survives a crash or a power cut (DESIGN principle 3).

Reads use their own connection (aiosqlite) and see only committed data: never a write in progress,
always every acknowledged one. A run is one JSON document, its step data in rows of their own
(`run_steps`) and index tables recomputed from it on every save (the rows that changed written);
every query below is served by an index. A write finds the runs it reads in the writer's memory of
them (`cache`) when it can, the run object the last write saved included.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from engine.store.base import (
    AgentWorkRow,
    AttemptResult,
    Delivery,
    FileRecord,
    LogEntry,
    PersonWorkRow,
    RequestRecord,
    RunRow,
    StoreCounts,
    Transaction,
    VersionRecord,
)
from engine.store.migrations import SchemaError, pending
from engine.store.rows import VERSION_COLS, version_record
from engine.store.sqlite import outbox
from engine.store.sqlite.cache import RunCache
from engine.store.sqlite.transaction import (
    REQUEST_SQL,
    RUN_COLS,
    SERVER_TIME,
    SqliteTransaction,
    run_of,
)
from engine.store.sqlite.writer import BUSY_MS, Writer, WriterStats
from engine.store.state import Notification, Run

T = TypeVar("T")
PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON")


async def _prepared(conn: aiosqlite.Connection, statements: tuple[str, ...]) -> aiosqlite.Connection:
    """`conn` after `statements`, or closed when one of them fails (on a file that is not a database)."""
    try:
        for statement in statements:
            await conn.execute(statement)
    except BaseException:
        await conn.close()
        raise
    return conn


def _prepared_sync(conn: sqlite3.Connection, statements: tuple[str, ...]) -> sqlite3.Connection:
    """`_prepared` for a `sqlite3` connection."""
    try:
        for statement in statements:
            conn.execute(statement)
    except BaseException:
        conn.close()
        raise
    return conn


async def connect(path: Path) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    return await _prepared(conn, (*PRAGMAS, f"PRAGMA busy_timeout={BUSY_MS}", "PRAGMA cache_size=-32768"))


def connect_writer(path: Path) -> sqlite3.Connection:
    """The writer's connection: used from the event loop's thread and the writer's own thread, one at
    a time (the writer sees to that); it never waits for a lock on the event loop (busy_timeout 0), and
    its COMMITs never checkpoint (the writer's checkpointer does, beside it)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=0)
    return _prepared_sync(conn, (*PRAGMAS, "PRAGMA cache_size=-32768", "PRAGMA wal_autocheckpoint=0"))


def connect_checkpointer(path: Path) -> sqlite3.Connection:
    """The connection the writer's thread checkpoints with."""
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=0)


async def connect_read_only(path: Path) -> aiosqlite.Connection:
    """`mode=ro`: SQLite itself refuses every write, so nothing in the data folder can change."""
    conn = await aiosqlite.connect(path.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
    return await _prepared(conn, (f"PRAGMA busy_timeout={BUSY_MS}", "PRAGMA query_only=ON"))


class SqliteStore:
    def __init__(
        self,
        writer: sqlite3.Connection | None,
        reader: aiosqlite.Connection,
        checkpointer: sqlite3.Connection | None = None,
    ) -> None:
        self._w = writer
        self._checkpointer = checkpointer
        cache = RunCache()
        self._writer = (
            None
            if writer is None
            else Writer(writer, lambda conn: SqliteTransaction(conn, cache), checkpointer, cache)
        )
        self._r = reader

    @classmethod
    async def open(cls, path: Path, *, read_only: bool = False, migrate: bool = True) -> SqliteStore:
        """The store in `path`, migrated to this version (SchemaError without `migrate` if it is behind);
        read-only, it must already be at it. A file that is not an apc database is a SchemaError too.
        When opening fails, every connection opened so far is closed before the error is raised."""
        writer: sqlite3.Connection | None = None
        reader: aiosqlite.Connection | None = None
        try:
            if read_only:
                reader = await connect_read_only(path)
                await _require_current(reader, str(path))
                return cls(None, reader)
            writer = connect_writer(path)
            await asyncio.to_thread(_migrate, writer, migrate, str(path))
            reader = await connect(path)
            return cls(writer, reader, connect_checkpointer(path))
        except BaseException as exc:
            if reader is not None:
                await reader.close()
            if writer is not None:
                writer.close()
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_NOTADB:
                raise SchemaError(f"{path} is not an apc database: {exc}") from exc
            raise

    @property
    def read_only(self) -> bool:
        return self._w is None

    @property
    def writer_stats(self) -> WriterStats:
        """Commits and requests so far (group commit's batch sizes, for benches and tests)."""
        return self._require_writer().stats

    @property
    def pending_writes(self) -> int:
        """Write requests queued behind the one running (for tests that build a batch)."""
        return self._require_writer().pending

    async def close(self) -> None:
        try:
            if self._writer is not None:
                await self._writer.close()
        finally:
            await self._r.close()
            if self._checkpointer is not None:
                self._checkpointer.close()
            if self._w is not None:
                self._w.close()

    def _require_writer(self) -> Writer[SqliteTransaction]:
        if self._writer is None:
            raise RuntimeError("the store is open read-only")
        return self._writer

    async def write(self, fn: Callable[[Transaction], Awaitable[T]]) -> T:
        return await self._require_writer().write(fn)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """One write request whose body is the `async with` block (migrations and bulk seeding)."""
        writer = self._require_writer()
        loop = asyncio.get_running_loop()
        entered: asyncio.Future[Transaction] = loop.create_future()
        body_done: asyncio.Future[BaseException | None] = loop.create_future()

        async def hold(tx: Transaction) -> None:
            entered.set_result(tx)
            failure = await body_done
            if failure is not None:
                raise failure

        request = asyncio.ensure_future(writer.write(hold))
        either: list[asyncio.Future[Any]] = [entered, request]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not entered.done():
            await request  # the write failed before the body could start: raise why
        try:
            yield entered.result()
        except BaseException as exc:
            body_done.set_result(exc)
            with suppress(BaseException):
                await request  # it fails with `exc`, raised below
            raise
        body_done.set_result(None)
        await request

    async def listen(self, on_change: Callable[[list[str]], None], stop: asyncio.Event) -> None:
        # The folder lock keeps every other server off this file: there is no one else to hear.
        await stop.wait()

    async def share_clock(self, at: datetime, speed: float) -> datetime | None:
        return None  # one server per file: no other clock to keep in step with

    # A read runs whole in one call on the reader's thread, its statement done when the call returns: a
    # statement left open between two calls (execute, then fetch) would keep the connection's read
    # snapshot for every read that overlapped it, and they would miss writes acknowledged meanwhile.
    async def _one(self, sql: str, *args: Any) -> Any:
        rows = await self._r.execute_fetchall(sql, args)
        return next(iter(rows), None)

    async def _all(self, sql: str, *args: Any) -> list[Any]:
        return list(await self._r.execute_fetchall(sql, args))

    async def get_meta(self, key: str) -> str | None:
        row = await self._one("SELECT value FROM meta WHERE key = ?", key)
        return None if row is None else row[0]

    async def server_time(self) -> str | None:
        return await self.get_meta(SERVER_TIME)

    async def get_run(self, run_id: str) -> Run | None:
        row = await self._one(f"SELECT {RUN_COLS} FROM runs r WHERE id = ?", run_id)
        return None if row is None else run_of(row[1], row[2])

    async def run_log(self, run_id: str, after_seq: int, limit: int) -> list[LogEntry]:
        rows = await self._all(
            "SELECT seq, at, kind, by, step_id, note, count, detail FROM run_log "
            "WHERE run_seq = (SELECT seq FROM runs WHERE id = ?) AND seq > ? ORDER BY seq LIMIT ?",
            run_id,
            after_seq,
            limit,
        )
        return [LogEntry(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7])) for r in rows]

    async def get_runs(self, run_ids: list[str]) -> dict[str, Run]:
        """Several runs in one query (a page of `get_work`)."""
        if not run_ids:
            return {}
        marks = ",".join("?" * len(run_ids))
        rows = await self._all(f"SELECT {RUN_COLS} FROM runs r WHERE id IN ({marks})", *run_ids)
        return {row[0]: run_of(row[1], row[2]) for row in rows}

    async def get_request(self, request_id: str) -> RequestRecord | None:
        row = await self._one(REQUEST_SQL, request_id)
        return None if row is None else RequestRecord(row[0], row[1], row[2], row[3], row[4])

    async def latest_version(self, name: str) -> VersionRecord | None:
        row = await self._one(
            f"SELECT {VERSION_COLS} FROM versions WHERE name = ? ORDER BY version DESC LIMIT 1", name
        )
        return None if row is None else version_record(row)

    async def get_version(self, name: str, version: int) -> VersionRecord | None:
        row = await self._one(
            f"SELECT {VERSION_COLS} FROM versions WHERE name = ? AND version = ?", name, version
        )
        return None if row is None else version_record(row)

    async def list_latest_versions(self, after: str | None, limit: int) -> list[VersionRecord]:
        rows = await self._all(
            f"SELECT {VERSION_COLS} FROM versions v WHERE name > ? AND version = "
            "(SELECT MAX(version) FROM versions WHERE name = v.name) ORDER BY name LIMIT ?",
            after or "",
            limit,
        )
        return [version_record(r) for r in rows]

    async def get_file(self, file_id: str) -> FileRecord | None:
        row = await self._one(
            "SELECT id, sha256, bytes, file_name, content_type, uploaded_by, uploaded_at FROM files WHERE id = ?",
            file_id,
        )
        return None if row is None else FileRecord(*row)

    async def list_runs(
        self,
        process: str | None,
        state: str | None,
        inputs: list[tuple[str, str]],
        before_seq: int | None,
        limit: int,
    ) -> list[RunRow]:
        # With an input filter the first one drives (a range of run_inputs_eq); otherwise runs' own
        # indexes do. Either way the scan walks only matching rows, newest first.
        bound = before_seq if before_seq is not None else 2**62
        cols = "r.id, r.process, r.version, r.state, r.outcome, r.started_at, r.updated_at, r.inputs, r.seq"
        where: list[str] = []
        args: list[Any] = []
        if inputs:
            (name, value), rest = inputs[0], inputs[1:]
            source = "run_inputs i JOIN runs r ON r.seq = i.run_seq"
            where += ["i.name = ?", "i.value = ?", "i.run_seq < ?"]
            args += [name, value, bound]
            order = "i.run_seq DESC"
        else:
            rest, source, order = [], "runs r", "r.seq DESC"
            where.append("r.seq < ?")
            args.append(bound)
        if process is not None:
            where.append("r.process = ?")
            args.append(process)
        if state is not None:
            where.append("r.state = ?")
            args.append(state)
        for name, value in rest:
            where.append(
                "EXISTS (SELECT 1 FROM run_inputs x WHERE x.name = ? AND x.value = ? AND x.run_seq = r.seq)"
            )
            args.extend((name, value))
        rows = await self._all(
            f"SELECT {cols} FROM {source} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?", *args, limit
        )
        return [RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7]), r[8]) for r in rows]

    async def agent_work(
        self, now: str, process: str | None, after: tuple[str, int, int] | None, limit: int
    ) -> list[AgentWorkRow]:
        where: list[str] = ["available_at <= ?"]
        args: list[Any] = [now]
        if process is not None:
            where.append("process = ?")
            args.append(process)
        if after is not None:
            where.append("(available_at, run_seq, step_index) > (?, ?, ?)")
            args.extend(after)
        rows = await self._all(
            "SELECT run_id, step_id, available_at, run_seq, step_index FROM ready_agent_steps "
            f"WHERE {' AND '.join(where)} ORDER BY available_at, run_seq, step_index LIMIT ?",
            *args,
            limit,
        )
        return [AgentWorkRow(*r) for r in rows]

    async def person_work(
        self,
        person: str,
        groups: list[str],
        process: str | None,
        after: tuple[str, int, int] | None,
        limit: int,
    ) -> list[PersonWorkRow]:
        # One indexed range scan per assignee, merged in SQL: each leg uses work_items_assignee.
        legs: list[str] = []
        args: list[Any] = []
        for kind, who in [("person", person), *(("group", g) for g in groups)]:
            leg = (
                "SELECT id, run_id, created_at, run_seq, item_seq FROM work_items "
                "WHERE assignee_kind = ? AND assignee = ?"
            )
            args.extend((kind, who))
            if process is not None:
                leg += " AND process = ?"
                args.append(process)
            if after is not None:
                leg += " AND (created_at, run_seq, item_seq) > (?, ?, ?)"
                args.extend(after)
            legs.append(f"SELECT * FROM ({leg} ORDER BY created_at, run_seq, item_seq LIMIT {int(limit)})")
        rows = await self._all(
            f"SELECT DISTINCT * FROM ({' UNION ALL '.join(legs)}) ORDER BY 3, 4, 5 LIMIT ?", *args, limit
        )
        return [PersonWorkRow(*r) for r in rows]

    async def due_runs(self, now: str) -> list[str]:
        rows = await self._all("SELECT DISTINCT run_id FROM timers WHERE at <= ? ORDER BY at", now)
        return [r[0] for r in rows]

    async def notifications(self, run_id: str | None = None) -> list[Notification]:
        return await outbox.notifications(self._r, run_id)

    async def deliveries(self, run_id: str | None = None) -> list[Delivery]:
        return await outbox.deliveries(self._r, run_id)

    async def claim_deliveries(self, owner: str, now: str, lease_until: str, limit: int) -> list[Delivery]:
        async def claim(tx: Transaction) -> list[Delivery]:
            return outbox.claim(_conn(tx), owner, now, lease_until, limit)

        return await self._require_writer().write(claim)

    async def record_attempt(self, delivery: Delivery, owner: str, result: AttemptResult) -> bool:
        async def record(tx: Transaction) -> bool:
            return outbox.record(_conn(tx), delivery, owner, result)

        return await self._require_writer().write(record)

    async def counts(self) -> StoreCounts:
        row = await self._one(
            "SELECT (SELECT COUNT(*) FROM runs WHERE state IN ('active', 'waiting')),"
            " (SELECT COUNT(*) FROM work_items),"
            " (SELECT COUNT(*) FROM overdue_steps),"
            " (SELECT COUNT(*) FROM deliveries WHERE state = 'pending')"
        )
        return StoreCounts(*row)


async def _require_current(conn: aiosqlite.Connection, where: str) -> None:
    """A read-only store cannot migrate: its file must be exactly this server's schema version."""
    async with conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_version'") as cur:
        if await cur.fetchone() is None:
            raise SchemaError(f"{where} is not an apc database: it has no schema_version table")
    async with conn.execute("SELECT MAX(version) FROM schema_version") as cur:
        row = await cur.fetchone()
    pending((row[0] if row is not None else None) or 0, migrate=False, where=where)


def _migrate(conn: sqlite3.Connection, migrate: bool, where: str) -> None:
    """Apply the pending migrations, one per transaction; SchemaError on a newer file."""
    conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        current = (row[0] if row is not None else None) or 0
        for migration in pending(current, migrate=migrate, where=where):
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in migration.statements("sqlite"):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (migration.version,))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
    finally:
        conn.execute("PRAGMA busy_timeout=0")


def _conn(tx: Transaction) -> sqlite3.Connection:
    assert isinstance(tx, SqliteTransaction)
    return tx.connection
