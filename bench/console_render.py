"""Console rendering at 160x48 with N open work items (and N runs), embedded: the engine on the UI's loop,
seeded in bulk through the store (`bench/seed.py`).

For each size: time to the first rendered work queue, the worst frame of a live refresh tick in which
1% of the runs changed (cancelled: their items leave), and the key-to-screen latency of `j` pressed
while a refresh runs. A frame is the longest the event loop could not handle input (measured by a
heartbeat task), so the engine's reads count too. Beside each, the same figure for the old approach: a
plain DataTable holding every row, refreshed by `clear()` + `add_rows()` (kept here only).

    .venv/bin/python bench/console_render.py [--sizes 10000,100000] [--ticks N]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from bench.seed import publish_approval, seed_approvals
from console.app import ApcApp
from console.client.base import ToolClient
from console.client.local import LocalClient
from console.config import ConsoleConfig
from console.panes.work import COLUMNS
from console.session import Session
from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import person
from engine.org import OrgConfig

SIZE = (160, 48)
START = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def updated_at(run_id: str) -> str:
    """Runs last changed at spread-out moments over three days, as a busy org's would."""
    n = int(run_id.removeprefix("r_"))
    return stamp(START - timedelta(minutes=n % 4320, seconds=n % 60))


def make_item(n: int) -> dict[str, Any]:
    run_id = f"r_{n:06d}"
    kind = ("approve", "task")[n % 2]
    return {
        "runId": run_id,
        "process": f"process-{n % 12}",
        "version": 1,
        "mode": "live",
        "workItem": {
            "id": f"w_{n:06d}",
            "stepId": f"step_{n % 7}",
            "kind": kind,
            "text": f"Review case {n} and decide.",
            "output": None,
            "evidence": None,
            "next": None,
            "assignedTo": {"group": f"group-{n % 5}"},
            "snapshot": f"s{n}",
            "due": stamp(START + timedelta(hours=1 + n % 96, seconds=n * 37 % 3600)),
            "escalation": None,
            "handoff": None,
            "decide": {
                "tool": "decide",
                "arguments": {
                    "runId": run_id,
                    "workItemId": f"w_{n:06d}",
                    "snapshot": f"s{n}",
                    "requestId": "<new UUID>",
                },
                "decisions": ["approved"],
            },
        },
    }


class SyntheticClient(ToolClient):
    def __init__(self, items: list[dict[str, Any]]) -> None:
        super().__init__(person("bench@example.com"))
        self.items = items

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        start = int(arguments.get("cursor") or 0)
        limit = int(arguments.get("limit") or 20)
        if tool == "get_work":
            rows = self.items
        elif tool == "list_runs":
            rows = [
                {
                    "id": i["runId"],
                    "process": i["process"],
                    "version": 1,
                    "state": arguments.get("state", "waiting"),
                    "outcome": None,
                    "startedAt": stamp(START),
                    "updatedAt": updated_at(i["runId"]),
                    "inputs": {},
                }
                for i in self.items[start : start + limit]
            ]
            more = start + limit < len(self.items)
            return {"ok": True, "data": {"items": rows, "nextCursor": str(start + limit) if more else None}}
        else:
            return {"ok": True, "data": {"items": [], "nextCursor": None}}
        page = rows[start : start + limit]
        more = start + limit < len(rows)
        return {"ok": True, "data": {"items": page, "nextCursor": str(start + limit) if more else None}}


def change_one_percent(items: list[dict[str, Any]], rng: random.Random, tick: int) -> None:
    for index in rng.sample(range(len(items)), max(1, len(items) // 100)):
        item = items[index]["workItem"]
        items[index] = {**items[index], "workItem": {**item, "text": f"{item['text']} (update {tick})"}}


REVIEWER = person("bench@example.com")
OPERATOR = person("ops@example.com", operator=True)


async def moved(done: Callable[[], bool], limit: float = 30.0) -> None:
    """Wait for the cursor to move; a key that never arrives is an error, not a hang."""
    deadline = time.perf_counter() + limit
    while not done():
        if time.perf_counter() > deadline:
            raise RuntimeError("the key never moved the cursor")
        await asyncio.sleep(0.0005)


async def drawn() -> None:
    """Let the repaint the move asked for run (Textual paints on the loop's next turns)."""
    for _ in range(3):
        await asyncio.sleep(0)


class Stalls:
    """The longest the event loop went without running a heartbeat: the worst frame input waited for."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last)
            last = now

    async def around(self, work: Callable[[], Awaitable[object]]) -> float:
        self.worst = 0.0
        self._task = asyncio.create_task(self._beat())
        try:
            await work()
        finally:
            self._task.cancel()
        return self.worst


@asynccontextmanager
async def seeded(count: int) -> AsyncIterator[tuple[Engine, ManualClock, list[str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        org = OrgConfig.build(
            groups={"reviewers": [REVIEWER.id]},
            people={REVIEWER.id: None},
            operators={OPERATOR.id: None},
        )
        clock = ManualClock(START)
        engine = await Engine.open(root / "data", org, clock=clock)
        try:
            await publish_approval(engine, root / "processes", "reviewers")
            ids = await seed_approvals(engine, clock, count)
            yield engine, clock, ids
        finally:
            await engine.close()


async def console_figures(count: int, ticks: int) -> tuple[float, float, float, float]:
    started = time.perf_counter()
    async with seeded(count) as (engine, clock, ids):
        print(f"  seeded {count:,} runs in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        client = LocalClient(engine, REVIEWER)
        app = ApcApp(Session(client, "bench", clock=clock), live=False, config=ConsoleConfig())
        app.animation_level = "none"
        started = time.perf_counter()
        async with app.run_test(size=SIZE) as pilot:
            await app.ready.wait()
            await pilot.pause()
            first = time.perf_counter() - started
            table = app.main.work.table
            # the queue read and drawn again from nothing, the app being up: the console's own part
            app.lists.forget()
            app.main.work.forget()
            began = time.perf_counter()
            await app.reload_all()
            await pilot.pause()
            reread = time.perf_counter() - began
            assert table.row_count >= 100 and table.current_key is not None
            rng = random.Random(7)
            stalls = Stalls()
            worst = latency = 0.0
            open_ids = list(ids)
            for _ in range(ticks):
                gone = rng.sample(range(len(open_ids)), max(1, len(open_ids) // 100))
                gone += [i for i in range(5) if i not in gone]  # some of them on screen
                for index in gone:
                    await engine.call(
                        OPERATOR,
                        "cancel",
                        {"runId": open_ids[index], "reason": "bench", "requestId": f"c-{open_ids[index]}"},
                    )
                open_ids = [run_id for i, run_id in enumerate(open_ids) if i not in set(gone)]
                clock.advance(seconds=2)

                async def tick() -> None:
                    await app.reload_all(full=False)
                    await pilot.pause()

                worst = max(worst, await stalls.around(tick))
                # `j` pressed as a refresh starts: how long until the cursor moved on screen
                row = table.cursor_row
                app.reload_soon()
                began = time.perf_counter()
                app.simulate_key("j")
                await moved(lambda row=row: table.cursor_row != row)  # type: ignore[misc]
                await drawn()
                latency = max(latency, time.perf_counter() - began)
                await app.workers.wait_for_complete()
    return first, reread, worst, latency


class NaiveTable(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row")


async def baseline_figures(count: int, ticks: int) -> tuple[float, float, float, float]:
    items = [make_item(n) for n in range(count)]
    app = NaiveTable()

    def rows() -> list[tuple[str, ...]]:
        return [
            (
                i["workItem"]["kind"],
                i["process"],
                i["runId"],
                i["workItem"]["stepId"],
                "0s",
                "in 1h",
                i["workItem"]["assignedTo"]["group"],
                i["workItem"]["text"],
            )
            for i in items
        ]

    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        for column in COLUMNS[1:]:
            table.add_column(column.label, width=column.width)
        table.add_rows(rows())
        await pilot.pause()
        first = time.perf_counter() - started
        table.clear()
        await pilot.pause()
        began = time.perf_counter()
        table.add_rows(rows())
        await pilot.pause()
        reread = time.perf_counter() - began
        table.focus()
        rng = random.Random(7)
        stalls = Stalls()
        worst = latency = 0.0

        def refill() -> None:
            table.clear()
            table.add_rows(rows())

        for tick in range(ticks):
            change_one_percent(items, rng, tick)

            async def refresh() -> None:
                refill()
                await pilot.pause()

            worst = max(worst, await stalls.around(refresh))
            table.move_cursor(row=0)
            await pilot.pause()
            app.call_later(refill)
            began = time.perf_counter()
            app.simulate_key("down")  # DataTable's own key for what `j` does in the console
            await moved(lambda: table.cursor_row == 1, limit=1800.0)
            await drawn()
            latency = max(latency, time.perf_counter() - began)
    return first, reread, worst, latency


LABELS = (
    "first render from app start",
    "first render of the queue, app up",
    "worst refresh frame",
    "key latency j during refresh",
)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated open item counts, ascending")
    parser.add_argument("--ticks", type=int, default=3)
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    found: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = {}
    for size in sizes:
        ours = await console_figures(size, options.ticks)
        print(
            f"# {size:,} open work items at {SIZE[0]}x{SIZE[1]}, embedded, {options.ticks} ticks of 1% changed"
        )
        for label, mine in zip(LABELS, ours, strict=True):
            print(f"virtual table {label} {size}: {mine * 1000:.1f} ms", flush=True)
        theirs = await baseline_figures(size, options.ticks)
        found[size] = (ours, theirs)
        for label, mine, base in zip(LABELS, ours, theirs, strict=True):
            print(f"old DataTable {label} {size}: {base * 1000:.1f} ms")
            print(f"ratio virtual/old {label} {size}: {mine / base:.2f}", flush=True)
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        for index, label in enumerate(LABELS):
            for name, side in (("virtual table", 0), ("old DataTable", 1)):
                ratio = found[large][side][index] / found[small][side][index]
                print(f"ratio {large // 1000}k/{small // 1000}k {name} {label}: {ratio:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
