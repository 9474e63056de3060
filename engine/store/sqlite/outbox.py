"""The outbox in SQLite: notifications, and their deliveries to the `[[notify]]` targets.

A notification is written in the transaction of the change it reports, with one delivery row per
target that wants its kind. Deliverers claim due rows through the store's writer, in one statement
inside a write transaction (which holds SQLite's write lock) that marks them with an owner and a
lease, so several servers on one database file never take one row at once, and a row whose owner died
is due again when its lease ends. Only the owner of the current claim (same owner, same attempt) can record its end.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

import aiosqlite

from engine.store.base import AttemptResult, Delivery
from engine.store.rows import DELIVERIES, NOTE_COLS, delivery_of, notification_of
from engine.store.state import Notification, stamp_of_wire


def insert(
    conn: sqlite3.Connection, notes: list[Notification], deliver_to: Callable[[str], Sequence[str]]
) -> None:
    for note in notes:
        cur = conn.execute(
            "INSERT INTO outbox (id, kind, run_id, process, step_id, recipients, at, test, work_item, outcome) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                note.id,
                note.kind,
                note.run_id,
                note.process,
                note.step_id,
                json.dumps(list(note.recipients)),
                note.at,
                int(note.test),
                note.work_item,
                note.outcome,
            ),
        )
        targets = deliver_to(note.kind)
        if targets:
            state, due = ("test", None) if note.test else ("pending", stamp_of_wire(note.at))
            conn.executemany(
                "INSERT INTO deliveries (notification_seq, target, state, next_at) VALUES (?, ?, ?, ?)",
                [(cur.lastrowid, url, state, due) for url in targets],
            )


async def notifications(conn: aiosqlite.Connection, run_id: str | None) -> list[Notification]:
    sql = f"SELECT {NOTE_COLS} FROM outbox o"
    args: tuple[str, ...] = ()
    if run_id is not None:
        sql, args = sql + " WHERE o.run_id = ?", (run_id,)
    return [
        notification_of(row) for row in await conn.execute_fetchall(sql + " ORDER BY o.seq", args)
    ]  # one call: see SqliteStore._one


async def deliveries(conn: aiosqlite.Connection, run_id: str | None) -> list[Delivery]:
    sql = DELIVERIES
    args: tuple[str, ...] = ()
    if run_id is not None:
        sql, args = sql + " WHERE o.run_id = ?", (run_id,)
    return [
        delivery_of(row) for row in await conn.execute_fetchall(sql + " ORDER BY d.id", args)
    ]  # one call: see SqliteStore._one


def claim(conn: sqlite3.Connection, owner: str, now: str, lease_until: str, limit: int) -> list[Delivery]:
    """One statement takes the rows (inside the writer's transaction), then they are read back."""
    ids = [
        row[0]
        for row in conn.execute(
            "UPDATE deliveries SET claimed_by = ?, next_at = ?, attempts = attempts + 1 WHERE id IN "
            "(SELECT id FROM deliveries WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?) "
            "RETURNING id",
            (owner, lease_until, now, limit),
        ).fetchall()
    ]
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"{DELIVERIES} WHERE d.id IN ({marks}) ORDER BY d.next_at, d.id", ids).fetchall()
    return [delivery_of(row) for row in rows]


def record(conn: sqlite3.Connection, delivery: Delivery, owner: str, result: AttemptResult) -> bool:
    delivered = result.at if result.state == "delivered" else None
    given_up = result.at if result.state == "given_up" else None
    row = conn.execute(
        "UPDATE deliveries SET state = ?, next_at = ?, last_error = COALESCE(?, last_error), "
        "delivered_at = ?, given_up_at = ?, claimed_by = NULL "
        "WHERE id = ? AND claimed_by = ? AND attempts = ? AND state = 'pending' RETURNING id",
        (
            result.state,
            result.retry_at if result.state == "pending" else None,
            result.error,
            delivered,
            given_up,
            delivery.id,
            owner,
            delivery.attempts,
        ),
    ).fetchone()
    return row is not None
