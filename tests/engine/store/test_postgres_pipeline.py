"""A PostgreSQL write is one pipeline (`PostgresStore.transaction`): its statements go out without
waiting for their answers, so an error reaches the write later than the statement that caused it.
It must still be what it was when each statement waited: a duplicate key is a `Conflict` that
keeps nothing and runs the write again, a lost connection is `StoreUnavailable`, and the pooled
connection is fit for the next write. Statements whose answers a write would wait for are avoided:
a note's deliveries take its seq inside the server, and the server time mark's row is written only
when a write passes the mark this server's commits left there."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.base import Conflict, RequestRecord, StoreUnavailable, Transaction
from engine.store.postgres import PostgresStore
from engine.store.postgres.transaction import SERVER_TIME
from engine.store.state import Notification, clock_mark, parse_stamp, stamp
from tests.engine.engine_support import SCREENER, THREE_AGENTS, call, err, make_org, ok, publish, start

RECORD = RequestRecord("req-1", "a_screener", "claim", "hash", "{}")
ONE_WRITER = 3
"""A pool size that leaves one connection to writes (`READ_CONNECTIONS` to reads): every write below
runs on the same connection as the one before it, when that one is still alive."""


@pytest.fixture
async def store(pg_database: str) -> AsyncIterator[PostgresStore]:
    """A store on one write connection, `RECORD` saved."""
    store = await PostgresStore.open(pg_database, pool_size=ONE_WRITER)
    try:
        await store.write(lambda tx: tx.save_request(RECORD))
        yield store
    finally:
        await store.close()


async def test_a_duplicate_key_found_at_the_commit_is_a_conflict_and_the_write_runs_again(
    store: PostgresStore,
) -> None:
    attempts: list[int] = []

    async def request(tx: Transaction) -> int:
        attempts.append(len(attempts) + 1)
        await tx.set_meta("attempt", str(len(attempts)))
        if len(attempts) == 1:
            await tx.save_request(RECORD)  # recorded already: it fails when the server reaches it
        return len(attempts)

    assert await store.write(request) == 2
    assert attempts == [1, 2]
    assert await store.get_meta("attempt") == "2"


async def test_a_duplicate_key_surfaces_at_the_next_read_and_nothing_of_the_write_is_kept(
    store: PostgresStore,
) -> None:
    read: list[object] = []
    with pytest.raises(Conflict, match="duplicate key"):
        async with store.transaction() as tx:
            await tx.set_meta("lost", "1")
            await tx.save_request(RECORD)
            read.append(await tx.get_request("req-2"))
    assert read == [], "the read after the failed statement raised"
    assert await store.get_meta("lost") is None


async def test_after_failed_writes_the_connection_serves_the_next_write(
    store: PostgresStore, caplog: pytest.LogCaptureFixture
) -> None:
    # More rounds than psycopg's prepare threshold (5): statements get prepared on the way, some of
    # them queued behind the failure (which the server skips), and none may be missing later. The
    # statements skipped answer "aborted" when the pipeline ends: not worth a warning each time.
    async def writes(tx: Transaction, n: int, fail: bool) -> None:
        if fail:
            await tx.save_request(RECORD)
            await asyncio.sleep(0.01)  # its error arrives meanwhile: raised at the next statement
        await tx.set_meta(f"k{n}", str(n))
        await tx.advance_clock("2026-01-01T00:00:00.000000Z")
        assert await tx.get_request(RECORD.request_id) == RECORD

    with caplog.at_level(logging.WARNING):
        for n in range(8):
            with pytest.raises(Conflict):
                async with store.transaction() as tx:
                    await writes(tx, n, fail=True)
            async with store.transaction() as tx:
                await writes(tx, n, fail=False)
    assert [await store.get_meta(f"k{n}") for n in range(8)] == [str(n) for n in range(8)]
    assert [r.getMessage() for r in caplog.records] == [], "no connection was returned mid-transaction"


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


async def test_notes_and_their_deliveries_written_without_waiting_keep_their_order(
    store: PostgresStore,
) -> None:
    # Each note and its deliveries are one statement, the note's seq taken inside the server.
    at = "2026-10-06T09:05:00Z"
    notes = [
        Notification("n1", "escalation", "r1", "p", "work", ("ops@example.com",), at, False, "w1"),
        Notification("n2", "run_ended", "r1", "p", None, (), at, False, None, "approved"),
        Notification("n3", "new_work", "r2", "p", "review", ("mira@example.com",), at, True, "w2"),
    ]
    targets = {"escalation": ["http://b/hook", "http://a/hook"], "new_work": ["http://a/hook"]}
    await store.write(lambda tx: tx.add_notifications(notes, lambda kind: targets.get(kind, [])))
    assert await store.notifications() == notes
    deliveries = await store.deliveries()
    assert [(d.notification, d.target, d.state, d.attempts, d.next_at) for d in deliveries] == [
        (notes[0], "http://b/hook", "pending", 0, "2026-10-06T09:05:00.000000Z"),
        (notes[0], "http://a/hook", "pending", 0, "2026-10-06T09:05:00.000000Z"),
        (notes[2], "http://a/hook", "test", 0, None),
    ]


def _at(seconds: float) -> str:
    return stamp(parse_stamp("2026-10-06T09:00:00.000000Z") + timedelta(seconds=seconds))


async def _advance(store: PostgresStore, seconds: float) -> None:
    await store.write(lambda tx: tx.advance_clock(_at(seconds)))


async def test_a_write_before_the_mark_this_server_left_does_not_touch_its_row(
    store: PostgresStore, pg_database: str
) -> None:
    await _advance(store, 0)
    with psycopg.connect(pg_database) as other:  # holds the row: a write touching it would wait
        other.execute("SELECT 1 FROM meta WHERE key = %s FOR UPDATE", (f"{SERVER_TIME}/{store.server_id}",))
        await asyncio.wait_for(_advance(store, 0.9), 5)
    assert await store.server_time() == clock_mark(_at(0))
    await _advance(store, 1.5)
    assert await store.server_time() == clock_mark(_at(1.5))


async def test_a_mark_a_failed_request_wrote_is_not_taken_as_left(store: PostgresStore) -> None:
    async def fail(tx: Transaction) -> None:
        await tx.advance_clock(_at(2))
        raise RuntimeError("refused")

    await _advance(store, 0)
    with pytest.raises(RuntimeError, match="refused"):
        await store.write(fail)
    assert await store.server_time() == clock_mark(_at(0))
    await _advance(store, 1.5)
    assert await store.server_time() == clock_mark(_at(1.5))


async def test_a_mark_another_write_of_this_server_moved_first_is_taken_as_it_is(pg_database: str) -> None:
    # The second write asks for a later time than the first, waits for the first's row lock, and then
    # finds the mark past its time: it leaves the mark as the first set it, and must not believe its own.
    store = await PostgresStore.open(pg_database, pool_size=4)  # two writes at once
    try:
        async with store.transaction() as first:
            await first.advance_clock(_at(0))
            assert await first.get_request("none") is None  # the mark's row is held now
            second = asyncio.create_task(_advance(store, 0.5))
            await asyncio.sleep(0.2)
            assert not second.done()
        await second
        assert await store.server_time() == clock_mark(_at(0))
        await _advance(store, 1.2)  # past the mark: recorded
        assert await store.server_time() == clock_mark(_at(1.2))
    finally:
        await store.close()


@asynccontextmanager
async def _round_trips(url: str) -> AsyncIterator[tuple[str, Counter[int]]]:
    """`url` through a TCP proxy that counts, per connection, the times the client speaks after the
    database did (or first): its round trips. Yields the proxy's URL and the counts."""
    parts = urlsplit(url)
    turns: Counter[int] = Counter()
    pumps: list[asyncio.Task[None]] = []
    writers: list[asyncio.StreamWriter] = []

    async def pump(
        source: asyncio.StreamReader, sink: asyncio.StreamWriter, link: list[str], side: str
    ) -> None:
        with suppress(ConnectionError):
            while data := await source.read(65536):
                if side == "client" and link[-1] != "client":
                    turns[id(link)] += 1
                link.append(side)
                sink.write(data)
                await sink.drain()

    async def accept(client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        server_in, server_out = await asyncio.open_connection(parts.hostname, parts.port or 5432)
        writers.extend((client_out, server_out))
        link = ["server"]
        pumps.append(asyncio.create_task(pump(client_in, server_out, link, "client")))
        pumps.append(asyncio.create_task(pump(server_in, client_out, link, "server")))

    proxy = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = proxy.sockets[0].getsockname()[1]
    user = f"{parts.username}@" if parts.username else ""
    try:
        yield parts._replace(netloc=f"{user}127.0.0.1:{port}").geturl(), turns
    finally:
        proxy.close()
        for writer in writers:
            writer.close()
        for writer in writers:
            with suppress(ConnectionError):
                await writer.wait_closed()
        await asyncio.gather(*pumps, return_exceptions=True)
        await proxy.wait_closed()


async def test_a_claim_and_a_submit_make_three_round_trips_each_and_a_refused_claim_four(
    tmp_path: Path, pg_database: str
) -> None:
    # The request record, then the run under its lock, then the rest with the COMMIT: counted on each
    # connection, the write's is the busiest (reads through the pool run on others).
    async with _round_trips(pg_database) as (url, turns):
        engine = await Engine.open(tmp_path / "data", make_org(), clock=ManualClock(), database=url)
        try:
            await publish(engine, tmp_path, THREE_AGENTS)
            run_id = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
            made = []
            for step in ("one", "two", "three"):
                turns.clear()
                token = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId=step), "claim")["token"]
                made.append(max(turns.values()))
                turns.clear()
                submitted = await call(
                    engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"
                )
                ok(submitted, "submit")
                made.append(max(turns.values()))
            second = (await start(engine, "three-agents", {"ticket": "B"}))["run"]["id"]
            ok(await call(engine, SCREENER, "claim", runId=second, stepId="one"), "claim")
            turns.clear()
            refused = await call(engine, SCREENER, "claim", runId=second, stepId="one")
            err(refused, "conflict", ["claimed_by_you"])
            made.append(max(turns.values()))
        finally:
            await engine.close()
    # The first claim opens a second connection for its one read of the process version (elsewhere). A
    # refused claim reads the same two, then rolls back with its sync, and the pipeline's end syncs once
    # more (6 when the ROLLBACK came apart, from the connection's exit).
    assert made[1:] == [3, 3, 3, 3, 3, 4]
