"""A write request's view of the SQLite store: plain `sqlite3` calls on the writer's connection.

The methods are async to meet the `Transaction` protocol, but none of them leaves the event loop's
thread: each statement is served from SQLite's page cache, and only the writer's COMMIT waits on the
disk (`writer`). Everything here runs inside the request's own SAVEPOINT, or for the first
request of a transaction in the transaction itself.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from engine.store import runlog
from engine.store.base import DerivedRows, FileRecord, LogEntry, RequestRecord, VersionRecord
from engine.store.records import compact
from engine.store.rows import VERSION_COLS, version_record
from engine.store.sqlite import outbox
from engine.store.sqlite.cache import CachedRun, RunCache
from engine.store.state import Notification, Run, clock_mark

SERVER_TIME = "server_time"
"""The meta row holding the server time mark: at or after every time a write issued (`clock_mark`)."""
LOG_ROWS = 1000
"""Run log entries per insert statement, well under SQLite's limit of bound values."""


class SqliteTransaction:
    def __init__(self, conn: sqlite3.Connection, cache: RunCache | None = None) -> None:
        self._c = conn
        self._cache = RunCache() if cache is None else cache

    @property
    def connection(self) -> sqlite3.Connection:
        return self._c

    async def get_run(self, run_id: str) -> Run | None:
        entry = self._cache.get(run_id) or self._read(run_id)
        if entry is None:
            return None
        if (spare := self._cache.spare(run_id)) is not None:
            return spare
        run = Run.from_json(entry.doc)
        run.data = dict(entry.data)
        return run

    def saved_rows(self, run_id: str) -> DerivedRows | None:
        entry = self._cache.get(run_id)
        return None if entry is None else entry.rows

    def _read(self, run_id: str) -> CachedRun | None:
        """The run as the database holds it, now in the cache."""
        row = self._c.execute("SELECT seq, state, outcome, doc FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        data: dict[str, dict[str, Any]] = {}
        chars: dict[str, int] = {}
        last = 0
        for step_id, pos, text in self._c.execute(
            "SELECT step_id, pos, data FROM run_steps WHERE run_seq = ? ORDER BY pos", (row[0],)
        ):
            data[step_id] = json.loads(text)
            chars[step_id] = len(text)
            last = pos
        entry = CachedRun(row[0], row[1], row[2], row[3], data, chars, last)
        self._cache.put(run_id, entry)
        return entry

    async def get_request(self, request_id: str) -> RequestRecord | None:
        return request_record(self._c, request_id)

    async def token_owner(self, token_hash: str) -> tuple[str, str] | None:
        row = self._c.execute(
            "SELECT run_id, step_id FROM tokens WHERE token_hash = ?", (token_hash,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    async def latest_version(self, name: str) -> VersionRecord | None:
        return latest_version(self._c, name)

    async def insert_run(self, run: Run, derived: DerivedRows, input_keys: list[tuple[str, str]]) -> None:
        doc = run.to_json(data=False)
        cur = self._c.execute(
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
                doc,
            ),
        )
        seq = cur.lastrowid
        assert seq is not None
        self._c.executemany(
            "INSERT INTO run_inputs (run_seq, name, value) VALUES (?, ?, ?)",
            [(seq, k, v) for k, v in input_keys],
        )
        chars, last = self._save_data(seq, run, {}, {}, 0)
        self._cache.put(
            run.id, CachedRun(seq, run.state, run.outcome, doc, dict(run.data), chars, last, [run], derived)
        )
        self._derive(run, derived, seq, DerivedRows([], [], []))

    async def save_run(self, run: Run, derived: DerivedRows, before: DerivedRows | None = None) -> None:
        saved = self._cache.saved_here(run.id)  # a second save of the run in this request
        before = before if saved is None else saved
        loaded = self._cache.get(run.id) or self._read(run.id)
        assert loaded is not None, f"run {run.id} vanished inside its own transaction"
        doc = run.to_json(data=False)
        # Only the columns that changed: an index on a column that is set is rewritten, same value or not.
        sets = ["updated_at = ?", "doc = ?"]
        args: list[str | None] = [run.updated_at, doc]
        if run.state != loaded.state:
            sets.append("state = ?")
            args.append(run.state)
        if run.outcome != loaded.outcome:
            sets.append("outcome = ?")
            args.append(run.outcome)
        self._c.execute(f"UPDATE runs SET {', '.join(sets)} WHERE seq = ?", (*args, loaded.seq))
        chars, last = self._save_data(loaded.seq, run, loaded.data, loaded.chars, loaded.last_pos)
        entry = CachedRun(
            loaded.seq, run.state, run.outcome, doc, dict(run.data), chars, last, [run], derived
        )
        self._cache.put(run.id, entry)
        self._derive(run, derived, loaded.seq, before)

    def _save_data(
        self, seq: int, run: Run, loaded: dict[str, dict[str, Any]], chars: dict[str, int], last: int
    ) -> tuple[dict[str, int], int]:
        """Write the step records that are not the objects loaded and delete those gone; the stored
        length of each record now, and the last position. A step's row keeps its place; a step new to
        the data goes last, as in the dict."""
        gone = [(seq, sid) for sid in loaded if sid not in run.data]
        if gone:
            self._c.executemany("DELETE FROM run_steps WHERE run_seq = ? AND step_id = ?", gone)
        texts = {sid: compact(rec) for sid, rec in run.data.items() if loaded.get(sid) is not rec}
        kept = [(text, seq, sid) for sid, text in texts.items() if sid in loaded]
        if kept:
            self._c.executemany("UPDATE run_steps SET data = ? WHERE run_seq = ? AND step_id = ?", kept)
        new = [(sid, text) for sid, text in texts.items() if sid not in loaded]
        if new:
            self._c.executemany(
                "INSERT INTO run_steps (run_seq, step_id, pos, data) VALUES (?, ?, ?, ?)",
                [(seq, sid, last + n, text) for n, (sid, text) in enumerate(new, 1)],
            )
        sizes = {sid: len(texts[sid]) if sid in texts else chars[sid] for sid in run.data}
        return sizes, last + len(new)

    def _derive(self, run: Run, derived: DerivedRows, seq: int, before: DerivedRows | None) -> None:
        """Write the index rows that changed: by difference with `before`, the rows the run's state
        implied before this write (a claim moves one ready step's row, a submit replaces it by the
        next step's), each row that went deleted by its key; all of them, after deleting the run's,
        when `before` is unknown (no write is: a repair's or a test's, at the cost of searching the
        process's ready steps and scanning the timers, which are keyed by time)."""
        c, rid = self._c, run.id
        if before is None:
            c.execute("DELETE FROM ready_agent_steps WHERE process = ? AND run_seq = ?", (run.process, seq))
            for table in ("work_items", "overdue_steps", "timers"):
                c.execute(f"DELETE FROM {table} WHERE run_id = ?", (rid,))
            before = DerivedRows([], [], [])
        # Rows that are their own key (a ready step's moves with its time): those that went are
        # deleted, the new ones inserted.
        old_steps, new_steps = set(before.agent_steps), set(derived.agent_steps)
        if old_steps - new_steps:
            c.executemany(
                "DELETE FROM ready_agent_steps "
                "WHERE process = ? AND available_at = ? AND run_seq = ? AND step_index = ?",
                [(run.process, at, seq, idx) for _, at, idx in old_steps - new_steps],
            )
        if new_steps - old_steps:
            c.executemany(
                "INSERT OR IGNORE INTO ready_agent_steps "
                "(run_id, step_id, process, available_at, run_seq, step_index) VALUES (?, ?, ?, ?, ?, ?)",
                [(rid, sid, run.process, at, seq, idx) for sid, at, idx in new_steps - old_steps],
            )
        # Rows keyed by item id: one whose key went is deleted, a new or changed one replaced.
        gone_items, changed_items = _by_key(before.work_items, derived.work_items)
        if gone_items:
            c.executemany(
                "DELETE FROM work_items WHERE run_id = ? AND id = ?", [(rid, wid) for wid in gone_items]
            )
        if changed_items:
            c.executemany(
                "INSERT OR REPLACE INTO work_items (id, run_id, step_id, process, assignee_kind, assignee, "
                "created_at, run_seq, item_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (wid, rid, sid, run.process, kind, who, at, seq, n)
                    for wid, sid, kind, who, at, n in changed_items
                ],
            )
        old_overdue, new_overdue = set(before.overdue), set(derived.overdue)
        if old_overdue - new_overdue:
            c.executemany(
                "DELETE FROM overdue_steps WHERE run_id = ? AND step_id = ?",
                [(rid, sid) for sid in old_overdue - new_overdue],
            )
        if new_overdue - old_overdue:
            c.executemany(
                "INSERT OR IGNORE INTO overdue_steps (run_id, step_id) VALUES (?, ?)",
                [(rid, sid) for sid in new_overdue - old_overdue],
            )
        old_timers, new_timers = set(before.timers), set(derived.timers)
        if old_timers - new_timers:
            c.executemany(
                "DELETE FROM timers WHERE run_id = ? AND at = ? AND kind = ? AND step_id = ?",
                [(rid, *timer) for timer in old_timers - new_timers],
            )
        if new_timers - old_timers:
            c.executemany(
                "INSERT OR IGNORE INTO timers (run_id, at, kind, step_id) VALUES (?, ?, ?, ?)",
                [(rid, *timer) for timer in new_timers - old_timers],
            )

    async def append_log(self, run_id: str, entries: Sequence[LogEntry]) -> None:
        # One statement (a write of more than LOG_ROWS entries, which no process does, takes more): a
        # row whose slot an older entry holds (the ring came round) is replaced; one this same entry
        # holds (a repeat) is counted.
        entry = self._cache.get(run_id) or self._read(run_id)
        assert entry is not None, f"a log entry for run {run_id}, which is not stored"
        for start in range(0, len(entries), LOG_ROWS):
            self._append(entry.seq, entries[start : start + LOG_ROWS])

    def _append(self, run_seq: int, entries: Sequence[LogEntry]) -> None:
        rows = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(entries))
        args: list[Any] = []
        for e in entries:
            detail = compact(e.detail)
            args += [
                run_seq,
                runlog.slot(e.seq),
                e.seq,
                e.at,
                e.kind,
                e.by,
                e.step_id,
                e.note,
                e.count,
                detail,
            ]
        self._c.execute(
            "INSERT INTO run_log (run_seq, slot, seq, at, kind, by, step_id, note, count, detail) "
            f"VALUES {rows} ON CONFLICT (run_seq, slot) DO UPDATE SET "
            "count = CASE WHEN seq = excluded.seq THEN count + excluded.count ELSE excluded.count END, "
            "at = CASE WHEN seq = excluded.seq THEN at ELSE excluded.at END, "
            "seq = excluded.seq, kind = excluded.kind, by = excluded.by, step_id = excluded.step_id, "
            "note = excluded.note, detail = excluded.detail",
            args,
        )

    async def save_request(self, record: RequestRecord) -> None:
        self._c.execute(
            "INSERT INTO requests (request_id, identity, tool, args_hash, result) VALUES (?, ?, ?, ?, ?)",
            (
                record.request_id,
                record.identity,
                record.tool,
                record.args_hash,
                record.result,
            ),
        )

    async def insert_version(self, record: VersionRecord) -> None:
        self._c.execute(
            f"INSERT INTO versions ({VERSION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        self._c.execute(
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
        outbox.insert(self._c, notes, deliver_to)

    async def set_meta(self, key: str, value: str) -> None:
        self._c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    async def delete_meta(self, key: str) -> None:
        self._c.execute("DELETE FROM meta WHERE key = ?", (key,))

    async def advance_clock(self, at: str) -> None:
        # Stamps sort as text, so the larger string is the later time. A mark at or after `at` is left
        # as it is: known to the writer, no statement; else the upsert writes no page (and returns no
        # row: the mark is `at` or later).
        if at <= self._cache.clock_mark():
            return
        row = self._c.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value < ? RETURNING value",
            (SERVER_TIME, clock_mark(at), at),
        ).fetchone()
        self._cache.put_mark(at if row is None else row[0])


def latest_version(conn: sqlite3.Connection, name: str) -> VersionRecord | None:
    sql = f"SELECT {VERSION_COLS} FROM versions WHERE name = ? ORDER BY version DESC LIMIT 1"
    row = conn.execute(sql, (name,)).fetchone()
    return None if row is None else version_record(row)


RUN_COLS = (
    "r.id, r.doc, (SELECT '{' || group_concat(json_quote(step_id) || ':' || data, ',') || '}' FROM "
    "(SELECT step_id, data FROM run_steps s WHERE s.run_seq = r.seq ORDER BY pos))"
)
"""A run's id, its document and its step data (one JSON object, pasted together unparsed) in one row."""


def run_of(doc: str, data: str | None) -> Run:
    run = Run.from_json(doc)
    run.data = json.loads(data) if data else {}
    return run


REQUEST_SQL = "SELECT request_id, identity, tool, args_hash, result FROM requests WHERE request_id = ?"


def request_record(conn: sqlite3.Connection, request_id: str) -> RequestRecord | None:
    row = conn.execute(REQUEST_SQL, (request_id,)).fetchone()
    return None if row is None else RequestRecord(row[0], row[1], row[2], row[3], row[4])


def _by_key(
    old: Sequence[tuple[Any, ...]], new: Sequence[tuple[Any, ...]]
) -> tuple[list[Any], list[tuple[Any, ...]]]:
    """Rows keyed by their first value: the keys that went, and the rows new or changed."""
    before = {row[0]: row for row in old}
    after = {row[0]: row for row in new}
    return [key for key in before if key not in after], [
        row for key, row in after.items() if before.get(key) != row
    ]
