"""A PostgreSQL write is one pipeline (`PostgresStore.transaction`): its statements go out without
waiting for their answers, so an error reaches the write later than the statement that caused it.
It must still be what it was when each statement waited: a duplicate key is a `Conflict` that
keeps nothing and runs the write again, a lost connection is `StoreUnavailable`, and the pooled
connection is fit for the next write."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import psycopg
import pytest

from engine.store.base import Conflict, RequestRecord, StoreUnavailable, Transaction
from engine.store.postgres import PostgresStore
from engine.store.state import Notification

RECORD = RequestRecord("req-1", "a_screener", "claim", "hash", "{}")
ONE_WRITER = 3
"""A pool size that leaves one connection to writes (`READ_CONNECTIONS` to reads): every write below
runs on the same connection as the one before it, when that one is still alive."""


async def _saved(store: PostgresStore) -> PostgresStore:
    await store.write(lambda tx: tx.save_request(RECORD))
    return store


async def test_a_duplicate_key_found_at_the_commit_is_a_conflict_and_the_write_runs_again(
    pg_database: str,
) -> None:
    store = await _saved(await PostgresStore.open(pg_database, pool_size=ONE_WRITER))
    attempts: list[int] = []

    async def request(tx: Transaction) -> int:
        attempts.append(len(attempts) + 1)
        await tx.set_meta("attempt", str(len(attempts)))
        if len(attempts) == 1:
            await tx.save_request(RECORD)  # recorded already: it fails when the server reaches it
        return len(attempts)

    try:
        assert await store.write(request) == 2
        assert attempts == [1, 2]
        assert await store.get_meta("attempt") == "2"
    finally:
        await store.close()


async def test_a_duplicate_key_surfaces_at_the_next_read_and_nothing_of_the_write_is_kept(
    pg_database: str,
) -> None:
    store = await _saved(await PostgresStore.open(pg_database, pool_size=ONE_WRITER))
    read: list[object] = []
    try:
        with pytest.raises(Conflict, match="duplicate key"):
            async with store.transaction() as tx:
                await tx.set_meta("lost", "1")
                await tx.save_request(RECORD)
                read.append(await tx.get_request("req-2"))
        assert read == [], "the read after the failed statement raised"
        assert await store.get_meta("lost") is None
    finally:
        await store.close()


async def test_after_failed_writes_the_connection_serves_the_next_write(
    pg_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    # More rounds than psycopg's prepare threshold (5): statements get prepared on the way, some of
    # them queued behind the failure (which the server skips), and none may be missing later. The
    # statements skipped answer "aborted" when the pipeline ends: not worth a warning each time.
    store = await _saved(await PostgresStore.open(pg_database, pool_size=ONE_WRITER))

    async def writes(tx: Transaction, n: int, fail: bool) -> None:
        if fail:
            await tx.save_request(RECORD)
            await asyncio.sleep(0.01)  # its error arrives meanwhile: raised at the next statement
        await tx.set_meta(f"k{n}", str(n))
        await tx.advance_clock("2026-01-01T00:00:00.000000Z")
        assert await tx.get_request(RECORD.request_id) == RECORD

    try:
        with caplog.at_level(logging.WARNING):
            for n in range(8):
                with pytest.raises(Conflict):
                    async with store.transaction() as tx:
                        await writes(tx, n, fail=True)
                async with store.transaction() as tx:
                    await writes(tx, n, fail=False)
        assert [await store.get_meta(f"k{n}") for n in range(8)] == [str(n) for n in range(8)]
        assert [r.getMessage() for r in caplog.records] == [], "no connection was returned mid-transaction"
    finally:
        await store.close()


async def test_a_connection_lost_inside_a_write_is_store_unavailable_and_the_next_write_succeeds(
    tmp_path: Path, pg_database: str
) -> None:
    name = f"apc_pipe_{tmp_path.name[-8:]}"
    store = await PostgresStore.open(f"{pg_database}&application_name={name}", pool_size=ONE_WRITER)
    try:
        with pytest.raises(StoreUnavailable, match="the database is unavailable"):
            async with store.transaction() as tx:
                assert await tx.get_request("req-1") is None  # the transaction is open on the server
                with psycopg.connect(pg_database, autocommit=True) as admin:
                    admin.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = %s AND xact_start IS NOT NULL",
                        (name,),
                    )
                await tx.set_meta("lost", "1")
        await store.write(lambda tx: tx.set_meta("after", "1"))
        assert (await store.get_meta("lost"), await store.get_meta("after")) == (None, "1")
    finally:
        await store.close()


async def test_notes_and_their_deliveries_written_without_waiting_keep_their_order(pg_database: str) -> None:
    # Each note and its deliveries are one statement, the note's seq taken inside the server.
    at = "2026-10-06T09:05:00Z"
    notes = [
        Notification("n1", "escalation", "r1", "p", "work", ("ops@example.com",), at, False, "w1"),
        Notification("n2", "run_ended", "r1", "p", None, (), at, False, None, "approved"),
        Notification("n3", "new_work", "r2", "p", "review", ("mira@example.com",), at, True, "w2"),
    ]
    targets = {"escalation": ["http://b/hook", "http://a/hook"], "new_work": ["http://a/hook"]}
    store = await PostgresStore.open(pg_database)
    try:
        await store.write(lambda tx: tx.add_notifications(notes, lambda kind: targets.get(kind, [])))
        assert await store.notifications() == notes
        deliveries = await store.deliveries()
        assert [(d.notification, d.target, d.state, d.attempts, d.next_at) for d in deliveries] == [
            (notes[0], "http://b/hook", "pending", 0, "2026-10-06T09:05:00.000000Z"),
            (notes[0], "http://a/hook", "pending", 0, "2026-10-06T09:05:00.000000Z"),
            (notes[2], "http://a/hook", "test", 0, None),
        ]
    finally:
        await store.close()
