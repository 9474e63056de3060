"""A PostgreSQL connection as the store uses one: its errors as the engine sees them, and the schema
migrated once however many servers start together."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection, errors

from engine.store.base import Conflict, StoreUnavailable
from engine.store.migrations import pending

Conn = AsyncConnection[tuple[Any, ...]]


def unavailable(exc: BaseException) -> StoreUnavailable:
    # libpq's messages name host and port, never the password; the first line is enough for a log.
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return StoreUnavailable(f"the database is unavailable: {first}")


@asynccontextmanager
async def mapped() -> AsyncIterator[None]:
    """Database errors as the engine sees them: Conflict (run it again) or StoreUnavailable (retry later)."""
    try:
        yield
    except (errors.TransactionRollback, errors.UniqueViolation, errors.LockNotAvailable) as exc:
        raise Conflict(str(exc).strip().splitlines()[0] if str(exc).strip() else "conflict") from None
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        raise unavailable(exc) from None


async def migrate_schema(conn: Conn, *, migrate: bool, where: str) -> None:
    """Apply the pending migrations, one transaction each, holding the schema's advisory lock so that
    servers starting together migrate once; SchemaError on a newer schema."""
    key = "SELECT hashtext(current_schema() || '.apc_migrations')"
    await conn.execute(f"SELECT pg_advisory_lock(({key}))")
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")
        row = await (await conn.execute("SELECT MAX(version) FROM schema_version")).fetchone()
        current = int(row[0]) if row is not None and row[0] is not None else 0
        for migration in pending(current, migrate=migrate, where=where):
            async with conn.transaction():
                for statement in migration.statements("postgres"):
                    await conn.execute(statement)
                await conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (migration.version,))
    finally:
        await conn.execute(f"SELECT pg_advisory_unlock(({key}))")
