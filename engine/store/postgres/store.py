"""PostgreSQL persistence (psycopg 3, async, with a bounded pool): several servers on one database.

The tables are SQLite's (`migrations`), so every query below is SQLite's with `%s` for `?`. What one
process's lock guarantees on SQLite, row locks guarantee here, across processes: a write reads the run
it changes with `SELECT ... FOR UPDATE` (READ COMMITTED), so two servers changing one run take turns
and the second sees the first's commit; a duplicate key (a `requestId` recorded meanwhile, a version
published meanwhile), a serialization failure or a deadlock rolls the transaction back as `Conflict`,
and the caller runs it again from the start. A lost or slow database is `StoreUnavailable` (the
caller answers `retry`), never a traceback. Every committed change publishes the ids of the runs it
touched on a LISTEN/NOTIFY channel (`listen`), so other servers wake at once. A write is one pipeline
(`PostgresStore.transaction`): it waits for the database only where it reads, and at its COMMIT.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from engine.store.base import (
    AgentWorkRow,
    AttemptResult,
    Conflict,
    Delivery,
    FileRecord,
    LogEntry,
    PersonWorkRow,
    RequestRecord,
    RunRow,
    StoreCounts,
    VersionRecord,
)
from engine.store.postgres import outbox
from engine.store.postgres.connection import Conn, mapped, migrate_schema, unavailable
from engine.store.postgres.transaction import SERVER_TIME, PostgresTransaction, latest
from engine.store.rows import VERSION_COLS, version_record
from engine.store.state import Notification, Run, parse_stamp, stamp
from engine.store.urls import redacted

log = logging.getLogger("engine.store")

T = TypeVar("T")

WRITE_ATTEMPTS = 8
"""How often `write` runs a request that keeps losing races before it gives up with `Conflict`."""
CLOCK = "clock"
LIVE_CLOCK_SECONDS = 5.0
"""A server's clock row refreshed longer ago than this (wall time) is a stopped server's."""
READ_CONNECTIONS = 2
"""Connections of the pool that writes leave to reads (see `PostgresStore._writes`)."""
NOTIFY_BYTES = 7900
"""A NOTIFY payload is below 8000 bytes; a change touching more runs than fit says `*` (everything)."""


class PostgresStore:
    def __init__(self, pool: AsyncConnectionPool[Conn], url: str, schema: str, pool_size: int) -> None:
        self._pool = pool
        self._writes = asyncio.Semaphore(max(1, pool_size - READ_CONNECTIONS))
        """A write may read through the pool while it holds its own connection (and a run's row lock):
        writes never take the connections kept for reads, so that read always gets one."""
        self._url = url
        self.schema = schema
        self.channel = f"apc_changes.{schema}"
        """The NOTIFY channel: one per schema, so organizations sharing a database do not wake each other."""
        self.server_id = secrets.token_hex(6)
        self._mark = ""
        """The server time mark this server's commits left in its row (`server_time/<id>`), or a time at
        or before it: no other server writes that row, so a write at or before it need not touch it."""

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        migrate: bool = True,
        pool_size: int = 10,
        statement_timeout_ms: int = 30_000,
        connect_timeout: float = 10.0,
    ) -> PostgresStore:
        """A pool of at most `pool_size` connections to `url`, its schema migrated to this version
        (SchemaError without `migrate` if it is behind); StoreUnavailable if it cannot be reached."""

        pool_size = max(pool_size, READ_CONNECTIONS + 1)

        async def configure(conn: Conn) -> None:
            await conn.execute(
                sql.SQL("SET statement_timeout = {}").format(sql.Literal(statement_timeout_ms))
            )

        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=configure,
            timeout=connect_timeout,
            open=False,
            name="apc",
        )
        # One connection first, outside the pool: a database that is not there fails at once (the
        # pool would keep trying until its timeout), and it migrates before the pool serves anything.
        async with mapped():
            async with await psycopg.AsyncConnection.connect(
                url, autocommit=True, connect_timeout=max(1, round(connect_timeout))
            ) as first:
                row = await (await first.execute("SELECT current_schema()")).fetchone()
                schema = str(row[0]) if row is not None and row[0] is not None else "public"
                await migrate_schema(first, migrate=migrate, where=f"the database {redacted(url)}")
            try:
                await pool.open(wait=True, timeout=connect_timeout)
            except BaseException:
                await pool.close()
                raise
        return cls(pool, url, schema, pool_size)

    @property
    def read_only(self) -> bool:
        return False

    async def close(self) -> None:
        await self._pool.close()

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[Conn]:
        async with mapped(), self._pool.connection() as conn:
            yield conn

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Conn]:
        """A pooled connection of its own (autocommit), for bulk work such as `apc db copy`."""
        async with self._conn() as conn:
            yield conn

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[PostgresTransaction]:
        # The whole transaction is one pipeline: a statement goes out without waiting for its answer,
        # and the write waits only where it reads (the request record, the run under its lock) and at
        # the end, where its last writes, the NOTIFY and the COMMIT make one round trip. An error in a
        # statement surfaces at the next read or at that end, still inside this block; the pooled
        # connection's exit rolls the transaction back, and `_mapped` says what the error was.
        async with self._writes, self._conn() as conn:
            async with conn.pipeline() as pipeline:
                try:
                    await conn.execute("BEGIN")
                    tx = PostgresTransaction(conn, self.server_id, self._mark)
                    yield tx
                    if tx.changed:
                        payload = f"{self.server_id}:{_payload(tx.changed)}"
                        await conn.execute("SELECT pg_notify(%s, %s)", (self.channel, payload))
                    await conn.execute("COMMIT")
                except BaseException:
                    # Rolled back in the same round trip as the sync (a refused write's error is Python's:
                    # the ROLLBACK runs; after a statement's error the server skips it, and the pooled
                    # connection's exit rolls back). The statements the server skipped answer "aborted":
                    # taken here, they are not logged as errors when the pipeline ends; the error that
                    # matters is on its way.
                    with suppress(psycopg.Error):
                        await conn.execute("ROLLBACK")
                    with suppress(psycopg.Error):
                        await pipeline.sync()
                    raise
            # Committed: the writes after it know. Its answer is already in; were reading it to fail,
            # the write would still be kept, so that must not look like a failed write (the old mark
            # stays, which only costs the next write a statement).
            with suppress(Exception):
                self._mark = max(self._mark, await tx.mark_left())

    async def write(self, fn: Callable[[PostgresTransaction], Awaitable[T]]) -> T:
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                async with self.transaction() as tx:
                    return await fn(tx)
            except Conflict:
                if attempt == WRITE_ATTEMPTS:
                    raise
                await asyncio.sleep(random.uniform(0, 0.005 * attempt))
        raise AssertionError("unreachable")

    async def listen(self, on_change: Callable[[list[str]], None], stop: asyncio.Event) -> None:
        """Call `on_change(run ids)` for every change another server commits (`["*"]`: any run; also
        when the listening connection was made again after a loss) until `stop` is set."""
        while not stop.is_set():
            try:
                conn = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
            except psycopg.OperationalError as exc:
                log.warning("cannot listen for changes: %s", unavailable(exc))
                await _sleep_or_stop(stop, 1.0)
                continue
            try:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                on_change(["*"])
                gen = conn.notifies()
                waiter = asyncio.ensure_future(stop.wait())
                try:
                    while not stop.is_set():
                        nxt = asyncio.ensure_future(anext(gen))
                        done, _ = await asyncio.wait({nxt, waiter}, return_when=asyncio.FIRST_COMPLETED)
                        if nxt not in done:
                            nxt.cancel()
                            break
                        sender, _, runs = nxt.result().payload.partition(":")
                        if sender != self.server_id:  # this server knows its own changes
                            on_change(runs.split(","))
                finally:
                    waiter.cancel()
            except psycopg.OperationalError as exc:
                log.warning("lost the change listener: %s", unavailable(exc))
                await _sleep_or_stop(stop, 0.5)
            finally:
                await conn.close()

    async def share_clock(self, at: datetime, speed: float) -> datetime | None:
        # Each server keeps a row of its own (`clock/<id>`: its time, the wall time it was read at, its
        # speed); a peer's time now is its time plus the wall time since, times its speed. Rows not
        # refreshed lately belong to servers that stopped, and are ignored.
        wall = datetime.now(UTC)
        mine = json.dumps({"at": stamp(at), "wall": stamp(wall), "speed": speed})
        async with self._conn() as conn:
            await conn.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (f"{CLOCK}/{self.server_id}", mine),
            )
            cur = await conn.execute(
                "SELECT value FROM meta WHERE key LIKE %s AND key <> %s",
                (CLOCK + "/%", f"{CLOCK}/{self.server_id}"),
            )
            rows = await cur.fetchall()
        latest: datetime | None = None
        for (value,) in rows:
            peer = json.loads(value)
            since = (wall - parse_stamp(peer["wall"])).total_seconds()
            if peer["speed"] != speed or not 0 <= since <= LIVE_CLOCK_SECONDS:
                continue
            shows = parse_stamp(peer["at"]) + timedelta(seconds=since * speed)
            latest = shows if latest is None or shows > latest else latest
        return latest

    async def _one(self, query: str, *args: Any) -> Any:
        async with self._conn() as conn:
            return await (await conn.execute(query, args)).fetchone()

    async def _all(self, query: str, *args: Any) -> list[Any]:
        async with self._conn() as conn:
            return list(await (await conn.execute(query, args)).fetchall())

    async def get_meta(self, key: str) -> str | None:
        row = await self._one("SELECT value FROM meta WHERE key = %s", key)
        return None if row is None else str(row[0])

    async def server_time(self) -> str | None:
        row = await self._one(
            "SELECT MAX(value) FROM meta WHERE key = %s OR key LIKE %s", SERVER_TIME, SERVER_TIME + "/%"
        )
        return None if row is None or row[0] is None else str(row[0])

    async def get_run(self, run_id: str) -> Run | None:
        row = await self._one("SELECT doc FROM runs WHERE id = %s", run_id)
        return None if row is None else Run.from_json(row[0])

    async def run_log(self, run_id: str, after_seq: int, limit: int) -> list[LogEntry]:
        rows = await self._all(
            'SELECT seq, at, kind, "by", step_id, note, count, detail FROM run_log '
            "WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s",
            run_id,
            after_seq,
            limit,
        )
        return [LogEntry(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7])) for r in rows]

    async def get_runs(self, run_ids: list[str]) -> dict[str, Run]:
        if not run_ids:
            return {}
        rows = await self._all("SELECT id, doc FROM runs WHERE id = ANY(%s)", run_ids)
        return {row[0]: Run.from_json(row[1]) for row in rows}

    async def get_request(self, request_id: str) -> RequestRecord | None:
        row = await self._one(
            "SELECT request_id, identity, tool, args_hash, result FROM requests WHERE request_id = %s",
            request_id,
        )
        return None if row is None else RequestRecord(row[0], row[1], row[2], row[3], row[4])

    async def latest_version(self, name: str) -> VersionRecord | None:
        async with self._conn() as conn:
            return await latest(conn, name)

    async def get_version(self, name: str, version: int) -> VersionRecord | None:
        row = await self._one(
            f"SELECT {VERSION_COLS} FROM versions WHERE name = %s AND version = %s", name, version
        )
        return None if row is None else version_record(row)

    async def list_latest_versions(self, after: str | None, limit: int) -> list[VersionRecord]:
        rows = await self._all(
            f"SELECT {VERSION_COLS} FROM versions v WHERE name > %s AND version = "
            "(SELECT MAX(version) FROM versions WHERE name = v.name) ORDER BY name LIMIT %s",
            after or "",
            limit,
        )
        return [version_record(r) for r in rows]

    async def get_file(self, file_id: str) -> FileRecord | None:
        row = await self._one(
            "SELECT id, sha256, bytes, file_name, content_type, uploaded_by, uploaded_at FROM files "
            "WHERE id = %s",
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
        bound = before_seq if before_seq is not None else 2**62
        cols = "r.id, r.process, r.version, r.state, r.outcome, r.started_at, r.updated_at, r.inputs, r.seq"
        where: list[str] = []
        args: list[Any] = []
        if inputs:
            (name, value), rest = inputs[0], inputs[1:]
            source = "run_inputs i JOIN runs r ON r.seq = i.run_seq"
            where += ["i.name = %s", "i.value = %s", "i.run_seq < %s"]
            args += [name, value, bound]
            order = "i.run_seq DESC"
        else:
            rest, source, order = [], "runs r", "r.seq DESC"
            where.append("r.seq < %s")
            args.append(bound)
        if process is not None:
            where.append("r.process = %s")
            args.append(process)
        if state is not None:
            where.append("r.state = %s")
            args.append(state)
        for name, value in rest:
            where.append(
                "EXISTS (SELECT 1 FROM run_inputs x WHERE x.name = %s AND x.value = %s AND x.run_seq = r.seq)"
            )
            args.extend((name, value))
        rows = await self._all(
            f"SELECT {cols} FROM {source} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT %s", *args, limit
        )
        return [RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7]), r[8]) for r in rows]

    async def agent_work(
        self, now: str, process: str | None, after: tuple[str, int, int] | None, limit: int
    ) -> list[AgentWorkRow]:
        where: list[str] = ["available_at <= %s"]
        args: list[Any] = [now]
        if process is not None:
            where.append("process = %s")
            args.append(process)
        if after is not None:
            where.append("(available_at, run_seq, step_index) > (%s, %s, %s)")
            args.extend(after)
        rows = await self._all(
            "SELECT run_id, step_id, available_at, run_seq, step_index FROM ready_agent_steps "
            f"WHERE {' AND '.join(where)} ORDER BY available_at, run_seq, step_index LIMIT %s",
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
        legs: list[str] = []
        args: list[Any] = []
        for n, (kind, who) in enumerate([("person", person), *(("group", g) for g in groups)]):
            leg = (
                "SELECT id, run_id, created_at, run_seq, item_seq FROM work_items "
                "WHERE assignee_kind = %s AND assignee = %s"
            )
            args.extend((kind, who))
            if process is not None:
                leg += " AND process = %s"
                args.append(process)
            if after is not None:
                leg += " AND (created_at, run_seq, item_seq) > (%s, %s, %s)"
                args.extend(after)
            legs.append(
                f"SELECT * FROM ({leg} ORDER BY created_at, run_seq, item_seq LIMIT {int(limit)}) AS leg{n}"
            )
        rows = await self._all(
            f"SELECT DISTINCT * FROM ({' UNION ALL '.join(legs)}) AS legs ORDER BY 3, 4, 5 LIMIT %s",
            *args,
            limit,
        )
        return [PersonWorkRow(*r) for r in rows]

    async def due_runs(self, now: str) -> list[str]:
        # Earliest timer first; runs with timers due at one instant in the order they were started.
        # SKIP LOCKED leaves out the runs another server's write holds right now (it may be applying
        # them): no server queues up behind another. Each run is applied once whatever this returns,
        # since the write re-reads it under its row lock and applies only what is still due.
        rows = await self._all(
            "SELECT r.id FROM runs r JOIN (SELECT run_id, MIN(at) AS first FROM timers WHERE at <= %s "
            "GROUP BY run_id) d ON d.run_id = r.id ORDER BY d.first, r.seq FOR UPDATE OF r SKIP LOCKED",
            now,
        )
        return [r[0] for r in rows]

    async def notifications(self, run_id: str | None = None) -> list[Notification]:
        async with self._conn() as conn:
            return await outbox.notifications(conn, run_id)

    async def deliveries(self, run_id: str | None = None) -> list[Delivery]:
        async with self._conn() as conn:
            return await outbox.deliveries(conn, run_id)

    async def claim_deliveries(self, owner: str, now: str, lease_until: str, limit: int) -> list[Delivery]:
        async with self._conn() as conn:
            return await outbox.claim(conn, owner, now, lease_until, limit)

    async def record_attempt(self, delivery: Delivery, owner: str, result: AttemptResult) -> bool:
        async with self._conn() as conn:
            return await outbox.record(conn, delivery, owner, result)

    async def counts(self) -> StoreCounts:
        row = await self._one(
            "SELECT (SELECT COUNT(*) FROM runs WHERE state IN ('active', 'waiting')),"
            " (SELECT COUNT(*) FROM work_items),"
            " (SELECT COUNT(*) FROM overdue_steps),"
            " (SELECT COUNT(*) FROM deliveries WHERE state = 'pending')"
        )
        return StoreCounts(*row)


def _payload(run_ids: set[str]) -> str:
    text = ",".join(sorted(run_ids))
    return text if len(text.encode()) <= NOTIFY_BYTES else "*"


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
