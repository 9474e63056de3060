"""A SQLite store that cannot be opened says why, and leaves nothing of itself open behind the error."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from engine.store.migrations import SCHEMA_VERSION, SchemaError
from engine.store.sqlite import SqliteStore
from engine.store.sqlite import store as sqlite_store


def open_files(path: Path) -> list[str]:
    """This process's file descriptors on the database file or its WAL and shared-memory files."""
    fds = Path("/proc/self/fd")
    found = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return sorted(found)


def reader_threads() -> set[threading.Thread]:
    """aiosqlite's connection threads running now."""
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name}


def still_running(before: set[threading.Thread]) -> list[threading.Thread]:
    """The connection threads started since `before` that do not end: a closed connection's thread
    ends just after `close()` returns, a leaked one never does (5 s is far beyond the first)."""
    started = reader_threads() - before
    for thread in started:
        thread.join(timeout=5)
    return [thread for thread in started if thread.is_alive()]


def not_a_database(tmp_path: Path) -> Path:
    path = tmp_path / "apc.db"
    path.write_bytes(b"a text file, not a database\n" * 200)
    return path


def newer_schema(tmp_path: Path) -> Path:
    path = tmp_path / "apc.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    return path


def another_database(tmp_path: Path) -> Path:
    path = tmp_path / "apc.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (not_a_database, "{path} is not an apc database: file is not a database"),
        (
            newer_schema,
            f"{{path}} is at schema {SCHEMA_VERSION + 1}, newer than this server's {SCHEMA_VERSION}",
        ),
    ],
)
async def test_a_file_that_cannot_be_opened_is_a_schema_error_and_nothing_stays_open(
    tmp_path: Path, read_only: bool, make: object, message: str
) -> None:
    assert callable(make)
    path = make(tmp_path)
    threads = reader_threads()
    with pytest.raises(SchemaError) as raised:
        await SqliteStore.open(path, read_only=read_only)
    # The traceback is still held here, so a connection only it refers to would still be open.
    assert str(raised.value) == message.format(path=path)
    assert open_files(path) == []
    assert still_running(threads) == []


async def test_read_only_a_database_of_something_else_is_not_an_apc_database(tmp_path: Path) -> None:
    path = another_database(tmp_path)
    with pytest.raises(SchemaError) as raised:
        await SqliteStore.open(path, read_only=True)
    assert str(raised.value) == f"{path} is not an apc database: it has no schema_version table"
    assert open_files(path) == []


async def test_read_only_a_store_behind_asks_for_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "apc.db"
    store = await SqliteStore.open(path)
    await store.close()
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM schema_version WHERE version = ?", (SCHEMA_VERSION,))
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError) as raised:
        await SqliteStore.open(path, read_only=True)
    assert str(raised.value) == (
        f"{path} is at schema {SCHEMA_VERSION - 1}, this server needs {SCHEMA_VERSION}: run `apc db upgrade`"
    )
    assert open_files(path) == []


async def test_a_failure_after_the_reader_opened_closes_the_reader_and_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "apc.db"
    threads = reader_threads()

    def refuse(_: Path) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite_store, "connect_checkpointer", refuse)
    with pytest.raises(sqlite3.OperationalError) as raised:
        await SqliteStore.open(path)
    assert str(raised.value) == "unable to open database file"
    assert open_files(path) == []
    assert still_running(threads) == []
