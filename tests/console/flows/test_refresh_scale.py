"""The console at scale, against a fake server serving pages from memory (so 100,000 rows cost no engine).

Scrolling and `G` read pages on demand; the cursor keeps its row when rows are inserted above; marks
survive paging; a refresh during a burst of keys loses none.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from pathlib import Path
from typing import Any

from bench.seed import publish_approval, seed_approvals
from console.app import ApcApp
from console.client.base import ToolClient
from console.live.session import Session
from console.settings.config import ConsoleConfig
from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import person
from tests.console.console_support import cells, make_app, make_client, press, settle, shown

WHO = person("ops@example.com", operator=True)
SIZE = (160, 48)


ITEM = {
    "stepId": "review",
    "kind": "approve",
    "output": None,
    "evidence": None,
    "next": None,
    "assignedTo": {"group": "reviewers"},
    "snapshot": "s1",
    "due": None,
    "escalation": None,
    "handoff": None,
    "decide": {"tool": "decide", "arguments": {}, "decisions": ["approved"]},
}


def entry(n: int) -> dict[str, Any]:
    """Built cheaply: the fake serves 100,000 of them."""
    item = {**ITEM, "id": f"w_{n:06d}", "text": f"Review case {n}."}
    return {
        "runId": f"r_{n:06d}",
        "process": f"process-{n % 3}",
        "version": 1,
        "mode": "live",
        "workItem": item,
    }


def summary(n: int) -> dict[str, Any]:
    return {
        "id": f"r_{n:06d}",
        "process": "bulk",
        "version": 1,
        "state": "waiting",
        "outcome": None,
        "startedAt": "2026-10-06T09:00:00Z",
        "updatedAt": "2026-10-06T09:00:00Z",
        "inputs": {"n": n},
    }


class PageServer(ToolClient):
    """Work items and runs by number, ascending; a cursor is the last number a page ended at."""

    def __init__(self, work: int, runs: int, *, delay: float = 0.0) -> None:
        super().__init__(WHO)
        self.work = list(range(work))
        self.runs = list(range(runs))
        self.delay = delay
        self.calls: list[str] = []

    def _page(self, numbers: list[int], arguments: dict[str, Any], make: Any) -> dict[str, Any]:
        cursor = arguments.get("cursor")
        start = bisect_right(numbers, int(cursor)) if cursor is not None else 0
        limit = int(arguments.get("limit") or 20)
        page = numbers[start : start + limit]
        more = start + limit < len(numbers)
        next_cursor = str(page[-1]) if more else None
        return {"ok": True, "data": {"items": [make(n) for n in page], "nextCursor": next_cursor}}

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        self.calls.append(tool)
        if self.delay:
            await asyncio.sleep(self.delay)
        if tool == "get_work":
            return self._page(self.work, arguments, entry)
        if tool == "list_runs":
            return self._page(self.runs, arguments, summary)
        if tool == "get_run":
            return {"ok": True, "data": {"run": {"updatedAt": "2026-10-06T09:00:00Z"}}}
        return {"ok": True, "data": {"items": [], "nextCursor": None}}


def app_for(server: PageServer) -> ApcApp:
    app = ApcApp(Session(server, "fake", clock=ManualClock()), live=False, config=ConsoleConfig())
    app.animation_level = "none"
    return app


async def test_scrolling_and_G_read_100k_rows_page_by_page() -> None:
    server = PageServer(100_000, 10)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        table, pages = app.main.work.table, app.lists.work
        told = len(app.toasts)
        assert table.row_count == 100 and server.calls.count("get_work") == 1
        assert shown(app, "#work-status").startswith("1–")
        assert shown(app, "#work-status").split(" · ")[0].endswith(" of ≥100")
        while table.window.last + table.visible_rows < 100:
            await press(pilot, "pagedown")
        assert table.row_count == 200, "scrolled within a screen of the end: the next page is read"
        await pilot.press("G")
        await app.workers.wait_for_complete()  # 1,000 pages: longer than `settle` waits on a busy machine
        await settle(pilot)
        assert table.row_count == 100_000 and not pages.more
        assert table.current_key == "r_099999/w_099999"
        assert server.calls.count("get_work") == 1_000, "each of the 1,000 pages read once"
        status = shown(app, "#work-status")
        assert status.split(" · ")[0].endswith("–100,000 of 100,000")
        assert pages.row("r_000000/w_000000") is None, "the first pages were let go"
        assert app.toasts[told:] == [], "rows read by scrolling on and G are not new work"
        await press(pilot, "g")
        assert pages.row("r_000000/w_000000") is not None, "and read again when scrolled back to"
        assert app.main.work.selected() == entry(0)


async def test_cursor_keeps_its_run_when_newer_runs_come_in_above() -> None:
    server = PageServer(0, 300)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        await press(pilot, "2")
        table = app.main.runs.table
        await press(pilot, *["j"] * 10)
        assert table.current_key == "r_000010"
        server.runs[:0] = [-3, -2, -1]
        await app.reload_all()
        await settle(pilot)
        assert (table.current_key, table.cursor_row) == ("r_000010", 13)
        assert table.keys[:4] == ["r_-00003", "r_-00002", "r_-00001", "r_000000"]


async def test_marks_survive_paging() -> None:
    server = PageServer(0, 20_000)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        await press(pilot, "2")
        runs = app.main.runs
        await press(pilot, "space", "space")
        assert runs.marked == {"r_000000", "r_000001"}
        await pilot.press("G")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert runs.table.row_count == 20_000 and runs.pages.row("r_000000") is None
        assert runs.marked == {"r_000000", "r_000001"}
        await press(pilot, "X")
        assert "Cancel 2 marked runs" in str(app.screen.query_one(".dialog-title").render())
        await press(pilot, "escape")
        await press(pilot, "g")
        marks = [(runs.table.row_cells(key) or ())[:1] for key in ("r_000000", "r_000002")]
        assert [[cell.plain for cell in cells] for cells in marks] == [["●"], [" "]]


async def test_a_refresh_during_a_key_burst_loses_no_keys() -> None:
    server = PageServer(5_000, 10, delay=0.02)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        table = app.main.work.table
        app.reload_soon()
        await pilot.press(*["j"] * 30)
        await settle(pilot)
        assert table.cursor_row == 30
        assert table.current_key == "r_000030/w_000030"


async def test_a_queue_seeded_in_bulk_opens_on_its_first_page(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    await publish_approval(engine, tmp_path / "bulk", "intake")
    ids = await seed_approvals(engine, clock, 250)
    app = make_app(make_client(engine), clock)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        work = app.main.work
        assert work.table.row_count == 100
        assert shown(app, "#work-status").split(" · ")[0].endswith(" of ≥100")
        await press(pilot, "G")
        assert work.table.row_count == 250
        assert [key.split("/")[0] for key in work.table.keys] == ids
        assert shown(app, "#work-status").split(" · ")[0].endswith("–250 of 250")


async def test_a_tick_reads_the_first_page_and_one_toward_the_end_and_a_paused_console_reads_nothing() -> (
    None
):
    server = PageServer(10_000, 500)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        server.calls.clear()
        await app.reload_all(full=False)
        assert server.calls == ["get_work"] * 2, "the first page (the rows on screen), and the next page"
        assert app.lists.work.pages == 2 and app.toasts == []
        await press(pilot, "p")
        server.calls.clear()
        app.live_refresh.tick()
        await settle(pilot)
        assert server.calls == []


async def test_new_work_at_the_end_of_a_queue_longer_than_a_page_is_announced() -> None:
    server = PageServer(300, 10)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        for _ in range(2):  # the end of the queue, found a page a tick
            await app.reload_all(full=False)
        assert app.lists.work.end_seen and app.toasts == []
        assert shown(app, "#work-status").split(" · ")[0].endswith(" of 300")
        server.work.append(300)
        server.calls.clear()
        await app.reload_all(full=False)
        await settle(pilot)
        assert server.calls.count("get_work") == 3, "page 0, the last page again, the page after it"
        assert app.toasts == ["New work: approve review · process-0 · r_000300"]
        server.work += [301, 302]
        await app.reload_all(full=False)
        await settle(pilot)
        assert app.toasts[1:] == ["2 new work items"]
        assert shown(app, "#notice") == "3 new work items"
        assert shown(app, "#work-status").split(" · ")[0].endswith(" of 303")
        assert app.main.work.table.keys[-3:] == [
            "r_000300/w_000300",
            "r_000301/w_000301",
            "r_000302/w_000302",
        ]


async def test_the_rows_on_screen_are_dated_once_each() -> None:
    server = PageServer(10_000, 10)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await settle(pilot)
        window = app.main.work.table.window
        on_screen = [f"r_{n:06d}" for n in range(window.first, window.last + 1)]
        assert server.calls.count("get_run") == len(on_screen), "one get_run per run on screen"
        assert app.lists.updated == dict.fromkeys(on_screen, "2026-10-06T09:00:00Z")
        server.calls.clear()
        await press(pilot, "j", "j")
        await app.reload_all(full=False)
        assert "get_run" not in server.calls, "a run already dated is not read again"


class HeldDates(PageServer):
    """Runs are read (to date the work items) only once `dates` is set."""

    def __init__(self, work: int, runs: int) -> None:
        super().__init__(work, runs)
        self.dates = asyncio.Event()

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        if tool == "get_run":
            await self.dates.wait()
        return await super().call(tool, arguments)


async def test_the_first_screen_is_written_before_its_rows_are_dated() -> None:
    server = HeldDates(1_000, 10)
    app = app_for(server)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        table = app.main.work.table
        age = [column.key for column in table.columns_spec].index("age")
        assert table.row_count == 100 and app.lists.updated == {}
        assert [cell.plain for cell in cells(table, "r_000000/w_000000")][age] == ""
        server.dates.set()
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert app.lists.updated["r_000000"] == "2026-10-06T09:00:00Z"
        assert [cell.plain for cell in cells(table, "r_000000/w_000000")][age] != ""
