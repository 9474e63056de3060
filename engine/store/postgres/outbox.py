"""The outbox in PostgreSQL: the same tables as SQLite's (`sqlite.outbox`), claimed with SKIP LOCKED.

A deliverer takes due rows with `FOR UPDATE SKIP LOCKED` and marks them with its owner and a lease in
the same statement, so servers sharing the database never take one row at once and never wait on each
other's claims; a row whose owner died is due again when its lease ends. Only the owner of the current
claim (same owner, same attempt) can record its end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from engine.store.base import AttemptResult, Delivery
from engine.store.rows import DELIVERIES, NOTE_COLS, delivery_of, notification_of
from engine.store.state import Notification, stamp_of_wire

if TYPE_CHECKING:  # psycopg loads only where a PostgreSQL store is opened
    from psycopg import AsyncConnection

    Conn = AsyncConnection[tuple[Any, ...]]


INSERT = (
    "WITH note AS (INSERT INTO outbox (id, kind, run_id, process, step_id, recipients, at, test, work_item, "
    "outcome) VALUES (%(id)s, %(kind)s, %(run_id)s, %(process)s, %(step_id)s, %(recipients)s, %(at)s, %(test)s, "
    "%(work_item)s, %(outcome)s) RETURNING seq) "
    "INSERT INTO deliveries (notification_seq, target, state, next_at) SELECT note.seq, t.url, %(state)s, "
    "%(next_at)s FROM note, unnest(%(targets)s::text[]) WITH ORDINALITY AS t(url, n) ORDER BY t.n"
)
"""A note and its deliveries (one per target, in order) in one statement that needs no answer: in the
write's pipeline it costs no round trip, where reading the note's `seq` back would cost one."""


async def insert(conn: Conn, notes: list[Notification], deliver_to: Callable[[str], Sequence[str]]) -> None:
    if notes:
        async with conn.cursor() as cur:
            await cur.executemany(INSERT, [_values(note, deliver_to(note.kind)) for note in notes])


def _values(note: Notification, targets: Sequence[str]) -> dict[str, Any]:
    state, due = ("test", None) if note.test else ("pending", stamp_of_wire(note.at))
    return asdict(note) | {
        "recipients": json.dumps(list(note.recipients)),
        "test": int(note.test),
        "state": state,
        "next_at": due,
        "targets": list(targets),
    }


async def notifications(conn: Conn, run_id: str | None) -> list[Notification]:
    sql = f"SELECT {NOTE_COLS} FROM outbox o"
    args: tuple[str, ...] = ()
    if run_id is not None:
        sql, args = sql + " WHERE o.run_id = %s", (run_id,)
    cur = await conn.execute(sql + " ORDER BY o.seq", args)
    return [notification_of(row) for row in await cur.fetchall()]


async def deliveries(conn: Conn, run_id: str | None) -> list[Delivery]:
    sql = DELIVERIES
    args: tuple[str, ...] = ()
    if run_id is not None:
        sql, args = sql + " WHERE o.run_id = %s", (run_id,)
    cur = await conn.execute(sql + " ORDER BY d.id", args)
    return [delivery_of(row) for row in await cur.fetchall()]


async def claim(conn: Conn, owner: str, now: str, lease_until: str, limit: int) -> list[Delivery]:
    async with conn.transaction():
        cur = await conn.execute(
            "UPDATE deliveries SET claimed_by = %s, next_at = %s, attempts = attempts + 1 WHERE id IN "
            "(SELECT id FROM deliveries WHERE state = 'pending' AND next_at <= %s ORDER BY next_at, id "
            "LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING id",
            (owner, lease_until, now, limit),
        )
        ids = [row[0] for row in await cur.fetchall()]
    if not ids:
        return []
    cur = await conn.execute(f"{DELIVERIES} WHERE d.id = ANY(%s) ORDER BY d.next_at, d.id", (ids,))
    return [delivery_of(row) for row in await cur.fetchall()]


async def record(conn: Conn, delivery: Delivery, owner: str, result: AttemptResult) -> bool:
    delivered = result.at if result.state == "delivered" else None
    given_up = result.at if result.state == "given_up" else None
    async with conn.transaction():
        cur = await conn.execute(
            "UPDATE deliveries SET state = %s, next_at = %s, last_error = COALESCE(%s, last_error), "
            "delivered_at = %s, given_up_at = %s, claimed_by = NULL "
            "WHERE id = %s AND claimed_by = %s AND attempts = %s AND state = 'pending' RETURNING id",
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
        )
        return await cur.fetchone() is not None
