"""The PostgreSQL the tests use: `APC_TEST_DATABASE_URL`, one fresh schema per test module.

A test that needs PostgreSQL asks for `pg_database` (a URL whose search_path is its module's schema,
emptied before the test) or `pg_schema_url` (the same schema, not emptied). When the database cannot
be reached, the test fails under CI (the `CI` variable is set) and is skipped with the reason on a
developer machine, so a PostgreSQL test is never silently passed.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql

from engine.store.urls import redacted

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
BOTH_STORES = ("sqlite", "postgresql")


def tests_database_url() -> str:
    return os.environ.get("APC_TEST_DATABASE_URL") or DEFAULT_URL


def with_schema(url: str, schema: str) -> str:
    """`url` with every connection's search_path set to `schema`."""
    options = quote(f"-csearch_path={schema}", safe="")
    return f"{url}{'&' if '?' in url else '?'}options={options}"


def unreachable(reason: str) -> None:
    message = f"PostgreSQL at {redacted(tests_database_url())} is not reachable: {reason}"
    if os.environ.get("CI"):
        pytest.fail(message + " (CI requires it)", pytrace=False)
    pytest.skip(message)


def admin_connect() -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(tests_database_url(), autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        unreachable(str(exc).strip().splitlines()[0])
        raise


def new_schema(label: str) -> str:
    return f"t_{re.sub(r'[^a-z0-9]+', '_', label.lower())[-40:]}_{secrets.token_hex(4)}"


@pytest.fixture(scope="module")
def pg_schema_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh schema for this test module (dropped after it), as a database URL."""
    schema = new_schema(request.module.__name__.rsplit(".", 1)[-1])
    with admin_connect() as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield with_schema(tests_database_url(), schema)
    finally:
        with admin_connect() as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def pg_database(pg_schema_url: str) -> str:
    """The module's schema with every table emptied (the schema version kept): a fresh store per test."""
    with psycopg.connect(pg_schema_url, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "AND tablename <> 'schema_version'"
            )
        ]
        if tables:
            names = sql.SQL(", ").join(sql.Identifier(t) for t in tables)
            conn.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(names))
    return pg_schema_url
