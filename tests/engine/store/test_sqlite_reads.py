"""Reads on the SQLite store's one reader connection see every write acknowledged before they began,
however many other reads overlap them (budget: 2 s)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from engine.store.base import FileRecord, Transaction
from engine.store.sqlite import SqliteStore


def inserting(n: int) -> Callable[[Transaction], Awaitable[None]]:
    async def insert(tx: Transaction) -> None:
        await tx.insert_file(file_record(n))

    return insert


def file_record(n: int) -> FileRecord:
    return FileRecord(
        f"f_{n:04d}", "0" * 64, 1, f"{n}.txt", "text/plain", "bot@example.com", "2026-01-01T00:00:00Z"
    )


async def test_a_read_after_an_acknowledged_write_sees_it_while_other_reads_overlap(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "apc.db")
    try:
        for n in range(50):  # rows enough that a read of them all spans several of the reader's turns
            await store.write(inserting(n))
        stop = asyncio.Event()

        async def other_reads() -> None:
            while not stop.is_set():
                await store.get_file("f_0000")
                await store.list_latest_versions(None, 100)
                await store.counts()

        readers = [asyncio.create_task(other_reads()) for _ in range(4)]
        missed = []
        for n in range(100, 300):
            await store.write(inserting(n))
            if await store.get_file(f"f_{n:04d}") is None:
                missed.append(n)
        stop.set()
        await asyncio.gather(*readers)
        assert missed == []
    finally:
        await store.close()
