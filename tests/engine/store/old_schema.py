"""A SQLite store file as an older version of the schema made it, holding the rows of a current one.

`as_schema(db_file, version)` applies migrations 1 to `version` to an empty file, copies every row of
`db_file` (a store at the current schema) into the tables of that layout, and puts the result in its
place: the file a server of that version would have left, for the next open to migrate.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.store.migrations import MIGRATIONS

RUN_ID = "(SELECT id FROM src.runs r WHERE r.seq = t.run_seq)"
"""A row's run id, for the tables keyed by the run's seq since schema 8."""
FOLDED_DATA = (
    "json_set(t.doc, '$.data', (SELECT json_group_object(step_id, json(data)) FROM "
    "(SELECT step_id, data FROM src.run_steps s WHERE s.run_seq = t.seq ORDER BY pos)))"
)
"""A run's document with its step data inside, as before schema 5."""


def as_schema(db_file: Path, version: int) -> None:
    old = db_file.with_name(f"schema-{version}.db")
    db = sqlite3.connect(old, isolation_level=None)
    try:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for migration in MIGRATIONS[:version]:
            for statement in migration.statements("sqlite"):
                db.execute(statement)
            db.execute("INSERT INTO schema_version VALUES (?)", (migration.version,))
        db.execute("ATTACH DATABASE ? AS src", (str(db_file),))
        source = {row[0] for row in db.execute("SELECT name FROM src.sqlite_master WHERE type = 'table'")}
        tables = [
            row[0]
            for row in db.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")
            if row[0] in source and row[0] not in ("schema_version", "sqlite_sequence")
        ]
        db.execute("BEGIN")
        for table in tables:
            columns = [row[1] for row in db.execute(f"PRAGMA main.table_info({table})")]
            values = [_value(table, column, version) for column in columns]
            names = ", ".join(f'"{c}"' for c in columns)
            db.execute(f"INSERT INTO main.{table} ({names}) SELECT {', '.join(values)} FROM src.{table} t")
        db.execute("COMMIT")
        db.execute("DETACH DATABASE src")
    finally:
        db.close()
    old.replace(db_file)


def _value(table: str, column: str, version: int) -> str:
    if column == "run_id" and table in ("run_log", "run_steps"):
        return RUN_ID
    if (table, column) == ("runs", "doc") and version < 5:
        return FOLDED_DATA
    return f't."{column}"'
