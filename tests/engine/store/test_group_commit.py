"""Group commit: write requests queued together share one COMMIT, each in its own savepoint, and no
caller hears back before that COMMIT returned. Batches are built by holding the writer on a request
that waits for an event, then queueing more behind it: counted, never timed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine.core import Engine
from engine.store.base import Transaction
from engine.store.sqlite import SqliteStore, SqliteTransaction
from tests.engine.engine_support import (
    OTHER_AGENT,
    SCREENER,
    THREE_AGENTS,
    call,
    err,
    ok,
    publish,
    rid,
    start,
)


def sqlite_store(engine: Engine) -> SqliteStore:
    assert isinstance(engine.store, SqliteStore)
    return engine.store


class Held:
    """A write request that holds the writer until released: whatever is queued meanwhile joins its batch."""

    def __init__(self, store: SqliteStore, *, fail: bool = False) -> None:
        self.store = store
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.fail = fail
        self.task = asyncio.ensure_future(store.write(self._hold))

    async def _hold(self, tx: Transaction) -> None:
        await tx.set_meta("held", "yes")
        self.started.set()
        await self.release.wait()
        if self.fail:
            raise ValueError("held failed")

    async def queue(self, *writes: Awaitable[Any]) -> list[asyncio.Future[Any]]:
        await self.started.wait()
        before = self.store.pending_writes
        tasks: list[asyncio.Future[Any]] = [asyncio.ensure_future(w) for w in writes]
        while self.store.pending_writes < before + len(writes):
            await asyncio.sleep(0)
        return tasks


def set_meta(key: str, value: str, *, fail: bool = False) -> Callable[[Transaction], Awaitable[str]]:
    async def request(tx: Transaction) -> str:
        await tx.set_meta(key, value)
        if fail:
            raise ValueError(f"{key} failed")
        return value

    return request


async def test_a_lone_write_is_committed_alone_and_answered(store: SqliteStore) -> None:
    for n in range(3):
        assert await store.write(set_meta(f"k{n}", "v")) == "v"
        assert (store.writer_stats.commits, store.writer_stats.requests) == (n + 1, n + 1)
    assert store.writer_stats.largest_batch == 1


async def test_requests_queued_together_share_one_commit(store: SqliteStore) -> None:
    held = Held(store)
    tasks = await held.queue(*(store.write(set_meta(f"k{n}", str(n))) for n in range(5)))
    held.release.set()
    assert await asyncio.gather(*tasks) == ["0", "1", "2", "3", "4"]
    await held.task
    assert (store.writer_stats.commits, store.writer_stats.requests, store.writer_stats.largest_batch) == (
        1,
        6,
        6,
    )
    assert [await store.get_meta(f"k{n}") for n in range(5)] == ["0", "1", "2", "3", "4"]


async def test_a_failing_request_rolls_back_only_its_own_savepoint(store: SqliteStore) -> None:
    held = Held(store)
    first, failing, last = await held.queue(
        store.write(set_meta("a", "1")),
        store.write(set_meta("b", "2", fail=True)),
        store.write(set_meta("c", "3")),
    )
    held.release.set()
    assert await first == "1"
    with pytest.raises(ValueError, match="b failed"):
        await failing
    assert await last == "3"
    await held.task
    assert store.writer_stats.commits == 1
    assert [await store.get_meta(k) for k in ("held", "a", "b", "c")] == ["yes", "1", None, "3"]


async def test_a_failing_first_request_leaves_the_ones_after_it_their_writes(store: SqliteStore) -> None:
    # The first request of a transaction runs without a savepoint: it fails by rolling back the whole
    # transaction, and the requests queued behind it begin another.
    held = Held(store, fail=True)
    tasks = await held.queue(
        store.write(set_meta("a", "1")),
        store.write(set_meta("b", "2", fail=True)),
        store.write(set_meta("c", "3")),
    )
    held.release.set()
    with pytest.raises(ValueError, match="held failed"):
        await held.task
    assert await tasks[0] == "1"
    with pytest.raises(ValueError, match="b failed"):
        await tasks[1]
    assert await tasks[2] == "3"
    assert [await store.get_meta(k) for k in ("held", "a", "b", "c")] == [None, "1", None, "3"]
    assert await store.write(set_meta("d", "4")) == "4"


async def test_a_lone_failing_request_keeps_nothing_and_the_next_write_goes_through(
    store: SqliteStore,
) -> None:
    with pytest.raises(ValueError, match="a failed"):
        await store.write(set_meta("a", "1", fail=True))
    assert await store.write(set_meta("b", "2")) == "2"
    assert [await store.get_meta("a"), await store.get_meta("b")] == [None, "2"]


async def test_each_request_sees_what_the_ones_before_it_in_the_batch_left(store: SqliteStore) -> None:
    async def later(tx: Transaction) -> tuple[str, str] | None:
        return await tx.token_owner("h1")

    async def token(tx: Transaction) -> None:
        assert isinstance(tx, SqliteTransaction)
        tx.connection.execute("INSERT INTO tokens (token_hash, run_id, step_id) VALUES ('h1', 'r_1', 'one')")

    held = Held(store)
    tasks = await held.queue(store.write(later), store.write(token), store.write(later))
    held.release.set()
    assert await asyncio.gather(*tasks) == [None, None, ("r_1", "one")]
    await held.task
    assert store.writer_stats.commits == 1


async def test_nobody_is_answered_before_the_commit_returns(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = store._writer
    assert writer is not None
    committing = asyncio.Event()
    go_on = asyncio.Event()
    original = writer._commit

    async def gated() -> None:
        committing.set()
        await go_on.wait()
        await original()

    monkeypatch.setattr(writer, "_commit", gated)
    task = asyncio.ensure_future(store.write(set_meta("k", "v")))
    await committing.wait()
    assert not task.done()
    assert await store.get_meta("k") is None  # a reader sees nothing of a write not yet committed
    go_on.set()
    assert await task == "v"
    assert await store.get_meta("k") == "v"  # and everything of one acknowledged


async def test_a_failed_commit_fails_every_request_of_its_batch(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = store._writer
    assert writer is not None
    original = writer._commit

    async def broken() -> None:
        raise OSError("disk I/O error")

    monkeypatch.setattr(writer, "_commit", broken)
    held = Held(store)
    tasks = await held.queue(store.write(set_meta("a", "1")), store.write(set_meta("b", "2")))
    held.release.set()
    for task in [held.task, *tasks]:
        with pytest.raises(OSError, match="disk I/O error"):
            await task
    monkeypatch.setattr(writer, "_commit", original)
    assert await store.write(set_meta("c", "3")) == "3"
    assert [await store.get_meta(k) for k in ("held", "a", "b", "c")] == [None, None, None, "3"]


async def test_a_request_cancelled_before_it_starts_is_skipped(store: SqliteStore) -> None:
    held = Held(store)
    kept, dropped = await held.queue(store.write(set_meta("a", "1")), store.write(set_meta("b", "2")))
    dropped.cancel()
    held.release.set()
    assert await kept == "1"
    await held.task
    assert store.writer_stats.requests == 2
    assert await store.get_meta("b") is None


async def test_a_caller_cancelled_while_its_started_request_waits_does_not_stop_the_writer(
    store: SqliteStore,
) -> None:
    held = Held(store)  # its caller began the batch itself (the writer was idle)
    [behind] = await held.queue(store.write(set_meta("a", "1")))
    held.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await held.task
    held.release.set()
    assert await behind == "1"  # the batch went on without the cancelled caller, and was committed
    assert (store.writer_stats.commits, store.writer_stats.requests) == (1, 2)
    assert [await store.get_meta(k) for k in ("held", "a")] == ["yes", "1"]
    assert await store.write(set_meta("b", "2")) == "2"


async def test_a_transaction_block_that_raises_keeps_nothing(store: SqliteStore) -> None:
    with pytest.raises(KeyError):
        async with store.transaction() as tx:
            await tx.set_meta("a", "1")
            raise KeyError("no")
    async with store.transaction() as tx:
        await tx.set_meta("b", "2")
    assert [await store.get_meta("a"), await store.get_meta("b")] == [None, "2"]


async def test_two_claims_of_one_step_in_one_batch_give_it_to_exactly_one(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    store = sqlite_store(engine)
    commits = store.writer_stats.commits
    held = Held(store)
    mine, theirs = await held.queue(
        call(engine, SCREENER, "claim", runId=run_id, stepId="one"),
        call(engine, OTHER_AGENT, "claim", runId=run_id, stepId="one"),
    )
    held.release.set()
    ok(await mine, "claim")
    err(await theirs, "conflict", ["claimed_by_other"])
    await held.task
    assert store.writer_stats.commits == commits + 1


async def test_one_request_id_twice_in_one_batch_is_one_write_and_one_replay(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    store = sqlite_store(engine)
    request_id = rid()
    arguments = {"process": "three-agents", "inputs": {"ticket": "T-1"}, "requestId": request_id}
    held = Held(store)
    first, again = await held.queue(
        engine.call(SCREENER, "start_run", arguments), engine.call(SCREENER, "start_run", dict(arguments))
    )
    held.release.set()
    one, two = ok(await first, "start_run"), ok(await again, "start_run")
    await held.task
    assert one == two
    runs = ok(await call(engine, SCREENER, "list_runs"), "list_runs")["items"]
    assert [r["id"] for r in runs] == [one["run"]["id"]]
