"""SQLite persistence (aiosqlite): WAL, `synchronous=FULL`, one writer connection and one reader.

FULL makes every commit fsync the WAL, so an acknowledged write survives a crash or a power cut
(DESIGN principle 3). Writes are serialized by the engine's lock; the separate reader connection only
ever sees committed data, so a read never observes a write in progress. A run is one JSON document
plus index tables recomputed from it on every save; every query below is served by an index.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from engine.store import sqlite_outbox
from engine.store.base import (
    AgentWorkRow,
    AttemptResult,
    Delivery,
    DerivedRows,
    FileRecord,
    PersonWorkRow,
    RequestRecord,
    RunRow,
    StoreCounts,
    VersionRecord,
)
from engine.store.migrations import SCHEMA_VERSION, pending
from engine.store.state import Notification, Run

T = TypeVar("T")
SERVER_TIME = "server_time"
"""The meta row holding the latest server time a write recorded."""

PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON")


async def connect(path: Path) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    for pragma in PRAGMAS:
        await conn.execute(pragma)
    await conn.execute("PRAGMA busy_timeout=5000")
    await conn.execute("PRAGMA cache_size=-32768")
    return conn


async def connect_read_only(path: Path) -> aiosqlite.Connection:
    """`mode=ro`: SQLite itself refuses every write, so nothing in the data folder can change."""
    conn = await aiosqlite.connect(path.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
    await conn.execute("PRAGMA busy_timeout=5000")
    await conn.execute("PRAGMA query_only=ON")
    return conn


class SqliteStore:
    def __init__(
        self,
        writer: aiosqlite.Connection | None,
        reader: aiosqlite.Connection,
        outbox: aiosqlite.Connection | None,
    ) -> None:
        self._w = writer
        self._r = reader
        self._outbox = outbox
        """The deliverers' own connection: claiming and recording deliveries never waits on (or holds
        up) the engine's writer beyond SQLite's own write lock. None, like the writer, when read-only."""

    @classmethod
    async def open(cls, path: Path, *, read_only: bool = False, migrate: bool = True) -> SqliteStore:
        """The store in `path`, migrated to this version (SchemaError without `migrate` if it is behind);
        read-only, it must already be at it."""
        if read_only:
            reader = await connect_read_only(path)
            try:
                await _require_current(reader)
            except BaseException:
                await reader.close()
                raise
            return cls(None, reader, None)
        writer = await connect(path)
        try:
            await _migrate(writer, migrate=migrate, where=str(path))
        except BaseException:
            await writer.close()
            raise
        reader = await connect(path)
        outbox = await connect(path)
        return cls(writer, reader, outbox)

    @property
    def read_only(self) -> bool:
        return self._w is None

    async def close(self) -> None:
        await self._r.close()
        for conn in (self._outbox, self._w):
            if conn is not None:
                await conn.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[SqliteTransaction]:
        if self._w is None:
            raise RuntimeError("the store is open read-only")
        await self._w.execute("BEGIN IMMEDIATE")
        try:
            yield SqliteTransaction(self._w)
        except BaseException:
            await self._w.execute("ROLLBACK")
            raise
        await self._w.execute("COMMIT")

    async def write(self, fn: Callable[[SqliteTransaction], Awaitable[T]]) -> T:
        async with self.transaction() as tx:
            return await fn(tx)

    async def listen(self, on_change: Callable[[list[str]], None], stop: asyncio.Event) -> None:
        # The folder lock keeps every other server off this file: there is no one else to hear.
        await stop.wait()

    async def share_clock(self, at: datetime, speed: float) -> datetime | None:
        return None  # one server per file: no other clock to keep in step with

    async def _one(self, sql: str, *args: Any) -> Any:
        async with self._r.execute(sql, args) as cur:
            return await cur.fetchone()

    async def _all(self, sql: str, *args: Any) -> list[Any]:
        async with self._r.execute(sql, args) as cur:
            return list(await cur.fetchall())

    async def get_meta(self, key: str) -> str | None:
        row = await self._one("SELECT value FROM meta WHERE key = ?", key)
        return None if row is None else row[0]

    async def server_time(self) -> str | None:
        return await self.get_meta(SERVER_TIME)

    async def get_run(self, run_id: str) -> Run | None:
        row = await self._one("SELECT doc FROM runs WHERE id = ?", run_id)
        return None if row is None else Run.from_json(row[0])

    async def get_runs(self, run_ids: list[str]) -> dict[str, Run]:
        """Several runs in one query (a page of `get_work`)."""
        if not run_ids:
            return {}
        marks = ",".join("?" * len(run_ids))
        rows = await self._all(f"SELECT id, doc FROM runs WHERE id IN ({marks})", *run_ids)
        return {row[0]: Run.from_json(row[1]) for row in rows}

    async def token_owner(self, token_hash: str) -> tuple[str, str] | None:
        row = await self._one("SELECT run_id, step_id FROM tokens WHERE token_hash = ?", token_hash)
        return None if row is None else (row[0], row[1])

    async def get_request(self, request_id: str) -> RequestRecord | None:
        row = await self._one(
            "SELECT request_id, identity, tool, args_hash, result FROM requests WHERE request_id = ?",
            request_id,
        )
        return None if row is None else RequestRecord(row[0], row[1], row[2], row[3], json.loads(row[4]))

    async def latest_version(self, name: str) -> VersionRecord | None:
        return await _latest(self._r, name)

    async def get_version(self, name: str, version: int) -> VersionRecord | None:
        row = await self._one(
            f"SELECT {_VERSION_COLS} FROM versions WHERE name = ? AND version = ?", name, version
        )
        return None if row is None else _version(row)

    async def list_latest_versions(self, after: str | None, limit: int) -> list[VersionRecord]:
        rows = await self._all(
            f"SELECT {_VERSION_COLS} FROM versions v WHERE name > ? AND version = "
            "(SELECT MAX(version) FROM versions WHERE name = v.name) ORDER BY name LIMIT ?",
            after or "",
            limit,
        )
        return [_version(r) for r in rows]

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
        return await sqlite_outbox.notifications(self._r, run_id)

    async def deliveries(self, run_id: str | None = None) -> list[Delivery]:
        return await sqlite_outbox.deliveries(self._r, run_id)

    async def claim_deliveries(self, owner: str, now: str, lease_until: str, limit: int) -> list[Delivery]:
        return await sqlite_outbox.claim(self._deliverers(), owner, now, lease_until, limit)

    async def record_attempt(self, delivery: Delivery, owner: str, result: AttemptResult) -> bool:
        return await sqlite_outbox.record(self._deliverers(), delivery, owner, result)

    def _deliverers(self) -> aiosqlite.Connection:
        if self._outbox is None:
            raise RuntimeError("the store is open read-only: nothing is delivered from it")
        return self._outbox

    async def counts(self) -> StoreCounts:
        row = await self._one(
            "SELECT (SELECT COUNT(*) FROM runs WHERE state IN ('active', 'waiting')),"
            " (SELECT COUNT(*) FROM work_items),"
            " (SELECT COUNT(*) FROM overdue_steps),"
            " (SELECT COUNT(*) FROM deliveries WHERE state = 'pending')"
        )
        return StoreCounts(*row)


class SqliteTransaction:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._c = conn
        self._seq: dict[str, int] = {}

    async def get_run(self, run_id: str) -> Run | None:
        async with self._c.execute("SELECT seq, doc FROM runs WHERE id = ?", (run_id,)) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        self._seq[run_id] = row[0]
        return Run.from_json(row[1])

    async def latest_version(self, name: str) -> VersionRecord | None:
        return await _latest(self._c, name)

    async def insert_run(self, run: Run, derived: DerivedRows, input_keys: list[tuple[str, str]]) -> None:
        cur = await self._c.execute(
            "INSERT INTO runs (id, process, version, state, outcome, started_at, updated_at, inputs, doc) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.id,
                run.process,
                run.version,
                run.state,
                run.outcome,
                run.started_at,
                run.updated_at,
                json.dumps(run.inputs, ensure_ascii=False),
                run.to_json(),
            ),
        )
        seq = cur.lastrowid
        assert seq is not None
        await self._c.executemany(
            "INSERT INTO run_inputs (run_seq, name, value) VALUES (?, ?, ?)",
            [(seq, k, v) for k, v in input_keys],
        )
        await self._derive(run, derived, seq, DerivedRows([], [], []))

    async def save_run(self, run: Run, derived: DerivedRows, before: DerivedRows | None = None) -> None:
        await self._c.execute(
            "UPDATE runs SET state = ?, outcome = ?, updated_at = ?, doc = ? WHERE id = ?",
            (run.state, run.outcome, run.updated_at, run.to_json(), run.id),
        )
        seq = self._seq.get(run.id)
        if seq is None:
            async with self._c.execute("SELECT seq FROM runs WHERE id = ?", (run.id,)) as cur:
                row = await cur.fetchone()
            assert row is not None, f"run {run.id} vanished inside its own transaction"
            seq = self._seq[run.id] = row[0]
        await self._derive(run, derived, seq, before)

    async def _derive(self, run: Run, derived: DerivedRows, seq: int, before: DerivedRows | None) -> None:
        """Rewrite the index rows of each table whose rows changed (all of them when `before` is unknown)."""
        c = self._c
        if before is None or before.agent_steps != derived.agent_steps:
            if before is None or before.agent_steps:
                await c.execute("DELETE FROM ready_agent_steps WHERE run_id = ?", (run.id,))
            await self._agent_rows(run, derived, seq)
        if before is None or before.work_items != derived.work_items:
            if before is None or before.work_items:
                await c.execute("DELETE FROM work_items WHERE run_id = ?", (run.id,))
            await self._item_rows(run, derived, seq)
        if before is None or before.overdue != derived.overdue:
            if before is None or before.overdue:
                await c.execute("DELETE FROM overdue_steps WHERE run_id = ?", (run.id,))
            if derived.overdue:
                await c.executemany(
                    "INSERT INTO overdue_steps (run_id, step_id) VALUES (?, ?)",
                    [(run.id, sid) for sid in derived.overdue],
                )
        if before is None or before.timers != derived.timers:
            if before is None or before.timers:
                await c.execute("DELETE FROM timers WHERE run_id = ?", (run.id,))
            if derived.timers:
                await c.executemany(
                    "INSERT INTO timers (run_id, at, kind, step_id) VALUES (?, ?, ?, ?)",
                    [(run.id, at, kind, sid) for at, kind, sid in derived.timers],
                )

    async def _agent_rows(self, run: Run, derived: DerivedRows, seq: int) -> None:
        if not derived.agent_steps:
            return
        await self._c.executemany(
            "INSERT INTO ready_agent_steps (run_id, step_id, process, available_at, run_seq, step_index) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(run.id, sid, run.process, at, seq, idx) for sid, at, idx in derived.agent_steps],
        )

    async def _item_rows(self, run: Run, derived: DerivedRows, seq: int) -> None:
        if not derived.work_items:
            return
        await self._c.executemany(
            "INSERT INTO work_items (id, run_id, step_id, process, assignee_kind, assignee, created_at, run_seq, "
            "item_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (wid, run.id, sid, run.process, kind, who, at, seq, item_seq)
                for wid, sid, kind, who, at, item_seq in derived.work_items
            ],
        )

    async def add_token(self, token_hash: str, run_id: str, step_id: str) -> None:
        await self._c.execute(
            "INSERT INTO tokens (token_hash, run_id, step_id) VALUES (?, ?, ?)", (token_hash, run_id, step_id)
        )

    async def save_request(self, record: RequestRecord) -> None:
        await self._c.execute(
            "INSERT INTO requests (request_id, identity, tool, args_hash, result) VALUES (?, ?, ?, ?, ?)",
            (
                record.request_id,
                record.identity,
                record.tool,
                record.args_hash,
                json.dumps(record.result, ensure_ascii=False, allow_nan=False),
            ),
        )

    async def insert_version(self, record: VersionRecord) -> None:
        await self._c.execute(
            f"INSERT INTO versions ({_VERSION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.name,
                record.version,
                record.content_hash,
                record.text,
                json.dumps(record.bindings),
                record.published_at,
                record.description,
                json.dumps(record.inputs, ensure_ascii=False),
                None if record.requires is None else json.dumps(record.requires),
            ),
        )

    async def insert_file(self, record: FileRecord) -> None:
        await self._c.execute(
            "INSERT INTO files (id, sha256, bytes, file_name, content_type, uploaded_by, uploaded_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.sha256,
                record.bytes,
                record.file_name,
                record.content_type,
                record.uploaded_by,
                record.uploaded_at,
            ),
        )

    async def add_notifications(
        self, notes: list[Notification], deliver_to: Callable[[str], Sequence[str]]
    ) -> None:
        await sqlite_outbox.insert(self._c, notes, deliver_to)

    async def set_meta(self, key: str, value: str) -> None:
        await self._c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    async def delete_meta(self, key: str) -> None:
        await self._c.execute("DELETE FROM meta WHERE key = ?", (key,))

    async def advance_clock(self, at: str) -> None:
        # Stamps sort as text, so the larger string is the later time.
        await self._c.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
            (SERVER_TIME, at),
        )


_VERSION_COLS = "name, version, content_hash, text, bindings, published_at, description, inputs, requires"


def _version(row: Any) -> VersionRecord:
    return VersionRecord(
        row[0],
        row[1],
        row[2],
        row[3],
        json.loads(row[4]),
        row[5],
        row[6],
        json.loads(row[7]),
        None if row[8] is None else json.loads(row[8]),
    )


async def _latest(conn: aiosqlite.Connection, name: str) -> VersionRecord | None:
    sql = f"SELECT {_VERSION_COLS} FROM versions WHERE name = ? ORDER BY version DESC LIMIT 1"
    async with conn.execute(sql, (name,)) as cur:
        row = await cur.fetchone()
    return None if row is None else _version(row)


async def _require_current(conn: aiosqlite.Connection) -> None:
    """A read-only store cannot migrate: its file must be exactly this server's schema version."""
    async with conn.execute("SELECT MAX(version) FROM schema_version") as cur:
        row = await cur.fetchone()
    current = (row[0] if row is not None else None) or 0
    if current != SCHEMA_VERSION:
        raise RuntimeError(
            f"store schema {current} is not this server's ({SCHEMA_VERSION}); open it writable once"
        )


async def _migrate(conn: aiosqlite.Connection, *, migrate: bool, where: str) -> None:
    """Apply the pending migrations, one per transaction; SchemaError on a newer file."""
    await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    async with conn.execute("SELECT MAX(version) FROM schema_version") as cur:
        row = await cur.fetchone()
    current = (row[0] if row is not None else None) or 0
    for migration in pending(current, migrate=migrate, where=where):
        await conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in migration.statements("sqlite"):
                await conn.execute(statement)
            await conn.execute("INSERT INTO schema_version (version) VALUES (?)", (migration.version,))
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        await conn.execute("COMMIT")
