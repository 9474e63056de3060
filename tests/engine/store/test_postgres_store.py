"""The PostgreSQL store's own behaviour: migrations under a lock, refusing a newer or (when asked) an
older schema, `apc db upgrade`, and a lost or unreachable database answering `retry` without a
traceback or the password anywhere in the log."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from engine.cli import main
from engine.clock import ManualClock, ServerClock
from engine.core import Engine
from engine.store.base import StoreUnavailable
from engine.store.migrations import MIGRATIONS, SCHEMA_VERSION, SchemaError
from engine.store.postgres import PostgresStore
from engine.store.sqlite import SqliteStore
from engine.store.state import stamp
from tests.engine.engine_support import MIRA, SCREENER, THREE_AGENTS, call, err, make_org, ok, publish, start

PASSWORD = "hunter2-not-for-logs"


def _versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [int(row[0]) for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]


async def test_servers_starting_together_migrate_a_fresh_schema_once(pg_database: str) -> None:
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS schema_version")
        for table in (
            "run_log",
            "deliveries",
            "outbox",
            "overdue_steps",
            "files",
            "requests",
            "tokens",
            "timers",
        ):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for table in ("work_items", "ready_agent_steps", "run_inputs", "runs", "versions", "meta"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    stores = await asyncio.gather(*(PostgresStore.open(pg_database) for _ in range(3)))
    for store in stores:
        await store.close()
    assert _versions(pg_database) == [m.version for m in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))


async def test_a_newer_schema_is_refused_by_both_stores(pg_database: str, tmp_path: Path) -> None:
    await (await PostgresStore.open(pg_database)).close()
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(SchemaError, match=f"at schema {SCHEMA_VERSION + 1}, newer than this server's"):
        await PostgresStore.open(pg_database)
    await (await SqliteStore.open(tmp_path / "engine.db")).close()
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("DELETE FROM schema_version WHERE version > %s", (SCHEMA_VERSION,))
    with sqlite3.connect(tmp_path / "engine.db") as db:
        db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION + 1,))
    db.close()
    with pytest.raises(SchemaError, match="newer than this server's"):
        await SqliteStore.open(tmp_path / "engine.db")


async def test_without_migrate_a_store_behind_is_refused_until_apc_db_upgrade(
    pg_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert SCHEMA_VERSION == 8, "undo the newest migrations below"
    await (await PostgresStore.open(pg_database)).close()
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("DELETE FROM schema_version WHERE version >= 4")
        # Undo 4 (the run log) so applying it again is a real migration; 5 to 8 change nothing on PostgreSQL.
        conn.execute("DROP TABLE run_log")
    with pytest.raises(SchemaError, match=f"at schema 3, this server needs {SCHEMA_VERSION}"):
        await PostgresStore.open(pg_database, migrate=False)
    # The status and output of the command itself; it runs its own event loop, so in a thread.
    status = await asyncio.to_thread(main, ["db", "upgrade", "--database", pg_database])
    assert status == 0
    assert capsys.readouterr().out.endswith(f": at schema {SCHEMA_VERSION}\n")
    assert _versions(pg_database) == list(range(1, SCHEMA_VERSION + 1))
    await (await PostgresStore.open(pg_database, migrate=False)).close()


async def test_a_lost_connection_answers_retry_once_and_then_the_pool_reconnects(
    tmp_path: Path, pg_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"{pg_database}&application_name=apc_lost_{tmp_path.name[-8:]}"
    engine = await Engine.open(tmp_path / "data", make_org(), clock=ManualClock(), database=url)
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
        with psycopg.connect(pg_database, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                (f"apc_lost_{tmp_path.name[-8:]}",),
            )
        with caplog.at_level(logging.DEBUG):
            answers = [await call(engine, MIRA, "get_run", runId=run_id) for _ in range(3)]
        retries = [a for a in answers if not a["ok"]]
        assert retries, "a terminated connection must surface as retry"
        for answer in retries:
            err(answer, "retry")
        ok(answers[-1], "get_run")
        assert all(r.exc_info is None for r in caplog.records), "no traceback for a lost connection"
        ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="one"), "claim")
    finally:
        await engine.close()


async def test_an_unreachable_database_is_store_unavailable_without_its_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:1/test"
    with caplog.at_level(logging.DEBUG), pytest.raises(StoreUnavailable) as raised:
        await PostgresStore.open(url, connect_timeout=1)
    assert str(raised.value).startswith("the database is unavailable: ")
    assert PASSWORD not in str(raised.value)
    assert all(PASSWORD not in r.getMessage() for r in caplog.records)


async def test_a_commit_wakes_the_other_servers_with_its_run_ids(tmp_path: Path, pg_database: str) -> None:
    writer = await Engine.open(tmp_path / "a", make_org(), clock=ManualClock(), database=pg_database)
    other = await PostgresStore.open(pg_database)
    heard: asyncio.Queue[list[str]] = asyncio.Queue()
    own: list[list[str]] = []
    stop = asyncio.Event()
    listeners = [
        asyncio.create_task(other.listen(heard.put_nowait, stop)),
        asyncio.create_task(writer.store.listen(own.append, stop)),
    ]
    try:
        assert await asyncio.wait_for(heard.get(), 10) == [
            "*"
        ]  # listening (again): anything may have changed
        while len(own) < 1:
            await asyncio.sleep(0.01)
        await publish(writer, tmp_path, THREE_AGENTS)
        run_id = (await start(writer, "three-agents", {"ticket": "A"}))["run"]["id"]
        assert await asyncio.wait_for(heard.get(), 10) == [run_id]
        ok(await call(writer, SCREENER, "claim", runId=run_id, stepId="one"), "claim")
        assert await asyncio.wait_for(heard.get(), 10) == [run_id]
        assert own == [["*"]], "a server is not woken by its own commits"
    finally:
        stop.set()
        await asyncio.gather(*listeners)
        await other.close()
        await writer.close()


async def test_sped_up_servers_keep_one_time_line(pg_database: str) -> None:
    first, second = await PostgresStore.open(pg_database), await PostgresStore.open(pg_database)
    try:
        ahead = datetime(2026, 10, 6, 12, 0, tzinfo=UTC)
        assert await first.share_clock(ahead, 60.0) is None  # alone so far
        behind = ahead - timedelta(minutes=10)
        peer = await second.share_clock(behind, 60.0)
        # The first server's time now: where it was, plus the (real) moments since, sixty times over.
        assert peer is not None and ahead <= peer < ahead + timedelta(minutes=5)
        assert await second.share_clock(behind, 1.0) is None, "a server at another speed is another time line"
    finally:
        await first.close()
        await second.close()
    clock = ServerClock(60.0, datetime(2026, 10, 6, 11, 50, tzinfo=UTC))
    clock.catch_up(datetime(2026, 10, 6, 12, 0, tzinfo=UTC))
    assert clock.now() >= datetime(2026, 10, 6, 12, 0, tzinfo=UTC)
    clock.catch_up(datetime(2026, 10, 6, 9, 0, tzinfo=UTC))
    assert clock.now() >= datetime(2026, 10, 6, 12, 0, tzinfo=UTC), "never back"


async def test_due_runs_leave_out_a_run_another_server_is_writing(tmp_path: Path, pg_database: str) -> None:
    clock = ManualClock()
    engine = await Engine.open(tmp_path / "data", make_org(), clock=clock, database=pg_database)
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        runs = [(await start(engine, "three-agents", {"ticket": t}))["run"]["id"] for t in "AB"]
        for run_id in runs:
            ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="one"), "claim")
        clock.advance(hours=2)  # past both leases
        now = stamp(clock.now())
        assert await engine.store.due_runs(now) == runs
        with psycopg.connect(pg_database) as other:  # another server's write, holding the first run
            other.execute("SELECT 1 FROM runs WHERE id = %s FOR UPDATE", (runs[0],))
            assert await engine.store.due_runs(now) == runs[1:]
        assert await engine.store.due_runs(now) == runs
    finally:
        await engine.close()
