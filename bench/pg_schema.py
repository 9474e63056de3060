"""A PostgreSQL database for the benches: the test server by default, a fresh schema each time so
parallel runs and test suites on the same database never meet, dropped after.
"""

from __future__ import annotations

import argparse
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg import sql

DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/test"


def add_database_option(parser: argparse.ArgumentParser) -> None:
    """`--database URL`, from `APC_TEST_DATABASE_URL` as the tests take it, else the local test server."""
    parser.add_argument("--database", default=os.environ.get("APC_TEST_DATABASE_URL") or DEFAULT_DATABASE)


@asynccontextmanager
async def fresh_schema(database: str) -> AsyncIterator[str]:
    """The URL of a new schema in `database`, dropped on leaving."""
    schema = f"bench_{secrets.token_hex(4)}"
    async with await psycopg.AsyncConnection.connect(database, autocommit=True) as admin:
        await admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield database + ("&" if "?" in database else "?") + f"options=-csearch_path%3D{schema}"
    finally:
        async with await psycopg.AsyncConnection.connect(database, autocommit=True) as admin:
            await admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
