"""WAL pages (and bytes) one single-client write call appends, by tool and by table or index.

Each COMMIT with `synchronous=FULL` appends the pages it changed to the WAL and fsyncs it: the more
pages, the bigger that append. This drives runs of an agent-then-person process (start_run, claim,
submit, renew, decide) through `engine.call`, reads the WAL frames each call appended (the frames of
the file's current salts past those there before the call; a WAL that restarted after a checkpoint
counts from its start), and names each page's owner with SQLite's `dbstat` at the end. Beside them, in
the same run, a bare autocommit INSERT of a 1,500-byte row (about a run document's size, and like it
within one page), as the throughput bench's baseline inserts.

    .venv/bin/python bench/wal_pages.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import struct
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.workload import REVIEWER, checked, open_engine
from engine.identity import agent, person
from engine.store.sqlite import PRAGMAS

WAL_HEADER = 32
FRAME_HEADER = 24


class WalFrames:
    """The pages a WAL file holds, frame by frame, for the salts in its header."""

    def __init__(self, wal: Path) -> None:
        self.wal = wal
        self._salts: bytes | None = None
        self._seen = 0

    def _frames(self) -> tuple[bytes, int, list[int]]:
        data = self.wal.read_bytes()
        if len(data) < WAL_HEADER:
            return b"", 0, []
        page_size = struct.unpack(">I", data[8:12])[0]
        salts = data[16:24]
        pages = []
        at = WAL_HEADER
        while at + FRAME_HEADER + page_size <= len(data) and data[at + 8 : at + 16] == salts:
            pages.append(struct.unpack(">I", data[at : at + 4])[0])
            at += FRAME_HEADER + page_size
        return salts, page_size, pages

    def new_pages(self) -> tuple[list[int], int]:
        """The pages appended since the last call, and the page size."""
        salts, page_size, pages = self._frames()
        start = self._seen if salts == self._salts else 0
        self._salts, self._seen = salts, len(pages)
        return pages[start:], page_size


async def measure(root: Path, runs: int) -> None:
    engine = await open_engine(root, "engine")
    who, reviewer = agent("a_0"), person(REVIEWER)
    frames = WalFrames(root / "engine" / "engine.db-wal")
    pages: dict[str, list[list[int]]] = {}
    page_size = 0
    n = 0

    async def call(tool: str, identity: Any = who, **arguments: Any) -> Any:
        nonlocal n, page_size
        n += 1
        if tool != "get_run":
            arguments["requestId"] = f"r{n}"
        frames.new_pages()
        reply = checked(await engine.call(identity, tool, arguments))
        if tool != "get_run":
            appended, page_size = frames.new_pages()
            pages.setdefault(tool, []).append(appended)
        return reply

    try:
        for _ in range(runs):
            run_id = (await call("start_run", process="reviewed", inputs={}))["run"]["id"]
            token = (await call("claim", runId=run_id, stepId="fill"))["token"]
            await call("submit", token=token, output={"note": "x" * 1000}, summary="s")
            token = (await call("claim", runId=run_id, stepId="work"))["token"]
            token = (await call("renew", token=token, progress="going"))["token"]
            await call("submit", token=token, output={"note": "w"}, summary="s")
            [item] = (await call("get_run", reviewer, runId=run_id))["workItems"]
            await call(
                "decide",
                reviewer,
                runId=run_id,
                workItemId=item["id"],
                snapshot=item["snapshot"],
                decision="approved",
            )
    finally:
        await engine.close()
    owner = page_owners(root / "engine" / "engine.db")
    for tool, calls in pages.items():
        counts = [len(c) for c in calls]
        print(f"wal pages {tool}: {statistics.median(counts):.1f} pages/commit", flush=True)
        print(f"wal bytes {tool}: {statistics.median(counts) * (page_size + FRAME_HEADER):.0f} bytes/commit")
        by_owner = Counter(owner.get(p, "free or new") for c in calls for p in c)
        for name, count in by_owner.most_common():
            print(f"wal pages {tool} {name}: {count / len(calls):.2f} pages/commit")
    print(f"baseline insert+commit wal pages: {baseline_pages(root / 'baseline.db'):.1f} pages/commit")


def page_owners(db: Path) -> dict[int, str]:
    """Each page's table or index (`dbstat`), page 1 being the schema's and the file header's."""
    conn = sqlite3.connect(db)
    try:
        return {page: name for name, page in conn.execute("SELECT name, pageno FROM dbstat")}
    finally:
        conn.close()


def baseline_pages(db: Path, commits: int = 50, row_bytes: int = 1500) -> float:
    """Median WAL pages of one autocommit INSERT, WAL and synchronous=FULL."""
    conn = sqlite3.connect(db, isolation_level=None)
    for statement in PRAGMAS:
        conn.execute(statement)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)")
    frames = WalFrames(db.with_name(db.name + "-wal"))
    counts = []
    try:
        for _ in range(commits):
            frames.new_pages()
            conn.execute("INSERT INTO t (doc) VALUES (?)", ("x" * row_bytes,))
            counts.append(len(frames.new_pages()[0]))
    finally:
        conn.close()
    return statistics.median(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs driven (default 30)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(measure(Path(tmp), options.runs))


if __name__ == "__main__":
    main()
