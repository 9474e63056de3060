"""`apc db copy`: an organization's data from a SQLite data folder into an empty PostgreSQL database.

Both sides are at this version's schema (the source is read as it is, read-only; the target is
migrated first), so every table has the same columns on both (but SQLite's `run_steps`, folded back
into each run's document, where PostgreSQL keeps step data): each is copied row for row with COPY in
one transaction, in the order the migrations created them (a delivery after its notification), then
each identity column continues after the largest copied value. A target that already holds runs,
versions or requests is refused, so nothing is ever merged into another organization's data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from psycopg import sql

from engine.store.postgres import PostgresStore
from engine.store.sqlite import SqliteStore, connect_read_only

SKIPPED = ("schema_version", "sqlite_sequence", "run_steps")
SELECTS = {
    # SQLite keeps each step's run data in `run_steps` (schema 5); PostgreSQL keeps it in the document.
    "runs": "SELECT seq, id, process, version, state, outcome, started_at, updated_at, inputs, "
    "json_set(doc, '$.data', (SELECT json_group_object(step_id, json(data)) FROM "
    "(SELECT step_id, data FROM run_steps WHERE run_seq = runs.seq ORDER BY pos))) AS doc FROM runs",
    # SQLite keys a log entry by its run's seq (schema 8); PostgreSQL by its run's id.
    "run_log": "SELECT r.id AS run_id, l.slot, l.seq, l.at, l.kind, l.by, l.step_id, l.note, l.count, "
    "l.detail FROM run_log l JOIN runs r ON r.seq = l.run_seq",
}
IDENTITY_COLUMNS = {"runs": "seq", "outbox": "seq", "deliveries": "id"}


class CopyRefused(Exception):
    """The copy cannot be made (the target holds data, the source is not this version); nothing changed."""


@dataclass(frozen=True)
class Copied:
    rows: dict[str, int]
    """Rows copied per table, in copy order."""


async def sqlite_to_postgres(source: Path, target_url: str) -> Copied:
    """Copy the SQLite database file `source` into the PostgreSQL database `target_url`."""
    check = await SqliteStore.open(source, read_only=True)
    await check.close()
    reader = await connect_read_only(source)
    target = await PostgresStore.open(target_url)
    try:
        async with reader.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
        ) as cur:
            tables = [str(row[0]) for row in await cur.fetchall() if row[0] not in SKIPPED]
        copied: dict[str, int] = {}
        async with target.connection() as conn, conn.transaction():
            for table in ("runs", "versions", "requests"):
                query = sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(table))
                row = await (await conn.execute(query)).fetchone()
                if row is not None and row[0]:
                    raise CopyRefused(
                        f"the target database already holds {table}: copy only into an empty one"
                    )
            for table in tables:
                async with reader.execute(SELECTS.get(table, f'SELECT * FROM "{table}"')) as cur:
                    columns = [d[0] for d in cur.description]
                    rows = list(await cur.fetchall())
                statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
                    sql.Identifier(table), sql.SQL(", ").join(sql.Identifier(c) for c in columns)
                )
                async with conn.cursor() as pg, pg.copy(statement) as copy:
                    for values in rows:
                        await copy.write_row(values)
                copied[table] = len(rows)
                column = IDENTITY_COLUMNS.get(table)
                if column is not None and rows:
                    await conn.execute(
                        sql.SQL(
                            "SELECT setval(pg_get_serial_sequence({}, {}), (SELECT MAX({}) FROM {}))"
                        ).format(
                            sql.Literal(table),
                            sql.Literal(column),
                            sql.Identifier(column),
                            sql.Identifier(table),
                        )
                    )
        return Copied(copied)
    finally:
        await reader.close()
        await target.close()
