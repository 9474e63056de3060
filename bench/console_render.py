"""Console rendering: time to the first rendered work queue with N open items, and the worst frame of a
live refresh tick in which 1% of the items changed, beside a naive table that clears and refills.

The server is a synthetic client answering `get_work` and `list_runs` from memory, so the figures are
the console's own cost (building rows, diffing cells, rendering), not the engine's. The baseline is a
plain DataTable given the same rows by `clear()` + `add_rows()`, the way a table is usually refreshed.

    .venv/bin/python bench/console_render.py [--items N] [--ticks N]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from console.app import ApcApp
from console.client.base import ToolClient
from console.client.paging import PAGE, all_pages, run_updates
from console.config import ConsoleConfig
from console.panes.work import COLUMNS
from console.session import Session
from engine.clock import ManualClock
from engine.identity import person

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


async def console_figures(count: int, ticks: int) -> tuple[float, float]:
    items = [make_item(n) for n in range(count)]
    clock = ManualClock(START + timedelta(seconds=17))
    app = ApcApp(Session(SyntheticClient(items), "bench", clock=clock), live=False, config=ConsoleConfig())
    app.animation_level = "none"
    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await pilot.pause()
        first = time.perf_counter() - started
        assert len(app.main.work.table.keys) == count
        rng = random.Random(7)
        worst = 0.0
        client = app.client
        for tick in range(ticks):
            change_one_percent(items, rng, tick)
            clock.advance(seconds=2)
            entries, _, _ = await all_pages(lambda c: client.get_work(limit=PAGE, cursor=c))
            updated = await run_updates(client)
            began = time.perf_counter()
            app.main.work.show([e for e in entries if "workItem" in e], updated, clock.now(), app.palette)
            await pilot.pause()
            worst = max(worst, time.perf_counter() - began)
    return first, worst


class NaiveTable(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row")


async def baseline_figures(count: int, ticks: int) -> tuple[float, float]:
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
        rng = random.Random(7)
        worst = 0.0
        for tick in range(ticks):
            change_one_percent(items, rng, tick)
            began = time.perf_counter()
            table.clear()
            table.add_rows(rows())
            await pilot.pause()
            worst = max(worst, time.perf_counter() - began)
    return first, worst


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--ticks", type=int, default=5)
    options = parser.parse_args()
    first, worst = await console_figures(options.items, options.ticks)
    base_first, base_worst = await baseline_figures(options.items, options.ticks)
    print(f"console: work queue with {options.items} open items at {SIZE[0]}x{SIZE[1]}")
    print(f"  time to first render              {first * 1000:8.0f} ms")
    print(f"  worst frame, 1% changed per tick  {worst * 1000:8.0f} ms   ({options.ticks} ticks)")
    print("baseline: plain DataTable, clear() + add_rows() of the same rows")
    print(f"  time to first render              {base_first * 1000:8.0f} ms")
    print(f"  worst frame, 1% changed per tick  {base_worst * 1000:8.0f} ms")
    print(f"ratio: first render {first / base_first:.2f} · refresh frame {worst / base_worst:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
