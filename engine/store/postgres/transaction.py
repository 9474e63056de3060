"""A write request's view of the PostgreSQL store: statements on the write's own pooled connection,
pipelined (`PostgresStore.transaction`), the runs it changes read under their row locks."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from psycopg import AsyncCursor

from engine.store import runlog
from engine.store.base import DerivedRows, FileRecord, LogEntry, RequestRecord, VersionRecord
from engine.store.postgres import outbox
from engine.store.postgres.connection import Conn
from engine.store.rows import VERSION_COLS, version_record
from engine.store.state import Notification, Run, clock_mark

SERVER_TIME = "server_time"
"""Each server records the time it issued under `server_time/<its id>`: no row two servers fight over."""


class PostgresTransaction:
    def __init__(self, conn: Conn, server_id: str, mark: str) -> None:
        self._c = conn
        self._server_id = server_id
        self._mark = mark
        """At or before the server time mark in this server's row when the transaction began."""
        self._marked: tuple[str, AsyncCursor[tuple[Any, ...]]] | None = None
        """The time `advance_clock` recorded, and its statement (its answer read once committed)."""
        self._seq: dict[str, int] = {}
        self.changed: set[str] = set()
        """Ids of the runs this transaction wrote, published when it commits."""

    async def _run(self, query: str, args: Sequence[Any]) -> None:
        await self._c.execute(query, args)

    async def _many(self, query: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            async with self._c.cursor() as cur:
                await cur.executemany(query, rows)

    def saved_rows(self, run_id: str) -> DerivedRows | None:
        return None  # the run is read anew by every write: its rows are derived from it

    async def get_run(self, run_id: str) -> Run | None:
        """The run, locked until this transaction ends: a second server changing it waits, then reads
        what the first committed."""
        cur = await self._c.execute("SELECT seq, doc FROM runs WHERE id = %s FOR UPDATE", (run_id,))
        row = await cur.fetchone()
        if row is None:
            return None
        self._seq[run_id] = row[0]
        return Run.from_json(row[1])

    async def latest_version(self, name: str) -> VersionRecord | None:
        return await latest(self._c, name)

    async def get_request(self, request_id: str) -> RequestRecord | None:
        """A record another server committed is seen here; one it is still writing is not (then this
        request's own `save_request` waits for it and fails as `Conflict`, and the retry sees it)."""
        cur = await self._c.execute(
            "SELECT request_id, identity, tool, args_hash, result FROM requests WHERE request_id = %s",
            (request_id,),
        )
        row = await cur.fetchone()
        return None if row is None else RequestRecord(row[0], row[1], row[2], row[3], row[4])

    async def token_owner(self, token_hash: str) -> tuple[str, str] | None:
        cur = await self._c.execute("SELECT run_id, step_id FROM tokens WHERE token_hash = %s", (token_hash,))
        row = await cur.fetchone()
        return None if row is None else (row[0], row[1])

    async def insert_run(self, run: Run, derived: DerivedRows, input_keys: list[tuple[str, str]]) -> None:
        cur = await self._c.execute(
            "INSERT INTO runs (id, process, version, state, outcome, started_at, updated_at, inputs, doc) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING seq",
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
        row = await cur.fetchone()
        assert row is not None
        seq = self._seq[run.id] = row[0]
        await self._many(
            "INSERT INTO run_inputs (run_seq, name, value) VALUES (%s, %s, %s)",
            [(seq, k, v) for k, v in input_keys],
        )
        self.changed.add(run.id)
        await self._derive(run, derived, seq, DerivedRows([], [], []))

    async def save_run(self, run: Run, derived: DerivedRows, before: DerivedRows | None = None) -> None:
        await self._run(
            "UPDATE runs SET state = %s, outcome = %s, updated_at = %s, doc = %s WHERE id = %s",
            (run.state, run.outcome, run.updated_at, run.to_json(), run.id),
        )
        seq = self._seq.get(run.id)
        if seq is None:
            row = await (await self._c.execute("SELECT seq FROM runs WHERE id = %s", (run.id,))).fetchone()
            assert row is not None, f"run {run.id} vanished inside its own transaction"
            seq = self._seq[run.id] = row[0]
        self.changed.add(run.id)
        await self._derive(run, derived, seq, before)

    async def _derive(self, run: Run, derived: DerivedRows, seq: int, before: DerivedRows | None) -> None:
        """Rewrite the index rows of each table whose rows changed (all of them when `before` is unknown)."""
        if before is None or before.agent_steps != derived.agent_steps:
            if before is None or before.agent_steps:
                await self._run("DELETE FROM ready_agent_steps WHERE run_id = %s", (run.id,))
            await self._many(
                "INSERT INTO ready_agent_steps (run_id, step_id, process, available_at, run_seq, step_index) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                [(run.id, sid, run.process, at, seq, idx) for sid, at, idx in derived.agent_steps],
            )
        if before is None or before.work_items != derived.work_items:
            if before is None or before.work_items:
                await self._run("DELETE FROM work_items WHERE run_id = %s", (run.id,))
            await self._many(
                "INSERT INTO work_items (id, run_id, step_id, process, assignee_kind, assignee, created_at, "
                "run_seq, item_seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (wid, run.id, sid, run.process, kind, who, at, seq, item_seq)
                    for wid, sid, kind, who, at, item_seq in derived.work_items
                ],
            )
        if before is None or before.overdue != derived.overdue:
            if before is None or before.overdue:
                await self._run("DELETE FROM overdue_steps WHERE run_id = %s", (run.id,))
            await self._many(
                "INSERT INTO overdue_steps (run_id, step_id) VALUES (%s, %s)",
                [(run.id, sid) for sid in derived.overdue],
            )
        if before is None or before.timers != derived.timers:
            if before is None or before.timers:
                await self._run("DELETE FROM timers WHERE run_id = %s", (run.id,))
            await self._many(
                "INSERT INTO timers (run_id, at, kind, step_id) VALUES (%s, %s, %s, %s)",
                [(run.id, at, kind, sid) for at, kind, sid in derived.timers],
            )

    async def append_log(self, run_id: str, entries: Sequence[LogEntry]) -> None:
        # One row per statement, in order (pipelined by executemany): PostgreSQL refuses one INSERT
        # that updates a row twice, which a repeat of an entry in the same write would be. A row
        # whose slot an older entry holds (the ring came round) is replaced; a repeat is counted.
        await self._many(
            'INSERT INTO run_log AS l (run_id, slot, seq, at, kind, "by", step_id, note, count, detail) '
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (run_id, slot) DO UPDATE SET "
            "count = CASE WHEN l.seq = excluded.seq THEN l.count + excluded.count ELSE excluded.count END, "
            "at = CASE WHEN l.seq = excluded.seq THEN l.at ELSE excluded.at END, "
            'seq = excluded.seq, kind = excluded.kind, "by" = excluded."by", step_id = excluded.step_id, '
            "note = excluded.note, detail = excluded.detail",
            [
                (
                    run_id,
                    runlog.slot(e.seq),
                    e.seq,
                    e.at,
                    e.kind,
                    e.by,
                    e.step_id,
                    e.note,
                    e.count,
                    json.dumps(e.detail, ensure_ascii=False, allow_nan=False),
                )
                for e in entries
            ],
        )

    async def save_request(self, record: RequestRecord) -> None:
        """A requestId recorded meanwhile by another server fails here (unique key): `Conflict`, and the
        request run again finds that record and answers with its result."""
        await self._run(
            "INSERT INTO requests (request_id, identity, tool, args_hash, result) VALUES (%s, %s, %s, %s, %s)",
            (
                record.request_id,
                record.identity,
                record.tool,
                record.args_hash,
                record.result,
            ),
        )

    async def insert_version(self, record: VersionRecord) -> None:
        await self._run(
            f"INSERT INTO versions ({VERSION_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
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
        await self._run(
            "INSERT INTO files (id, sha256, bytes, file_name, content_type, uploaded_by, uploaded_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
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
        await outbox.insert(self._c, notes, deliver_to)

    async def set_meta(self, key: str, value: str) -> None:
        await self._run(
            "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    async def delete_meta(self, key: str) -> None:
        await self._run("DELETE FROM meta WHERE key = %s", (key,))

    async def advance_clock(self, at: str) -> None:
        # Most writes come within a second of the mark's last move: no statement, and no wait for the
        # row's lock behind this server's other writes in flight. The answer (the mark it set, or none
        # when a concurrent write of this server had moved it past `at`) is read after the commit.
        if at <= self._mark:
            return
        cur = await self._c.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE meta.value < %s RETURNING value",
            (f"{SERVER_TIME}/{self._server_id}", clock_mark(at), at),
        )
        self._marked = (at, cur)

    async def mark_left(self) -> str:
        """Once committed: at or before the mark this server's row holds (`advance_clock`); "" when the
        transaction did not record a time."""
        if self._marked is None:
            return ""
        at, cur = self._marked
        row = await cur.fetchone()
        return at if row is None else str(row[0])


async def latest(conn: Conn, name: str) -> VersionRecord | None:
    query = f"SELECT {VERSION_COLS} FROM versions WHERE name = %s ORDER BY version DESC LIMIT 1"
    row = await (await conn.execute(query, (name,))).fetchone()
    return None if row is None else version_record(row)
