"""Console rendering at 160x48 with N open work items and N runs, the demo running beside it.

The demo runs on its own thread as `apc demo` runs it, so the console is measured under the load a
user sees. For each size: the first frame from app start (beside a bare Textual app's, the floor),
with the demo running, and redrawn with the app up; the worst frame of a live refresh in which 1% of
the runs changed (the longest the event loop could not take input); `j` pressed during a refresh,
to its frame; the demo's share of a core and its pace. Beside each, the old approach (a DataTable
refilled on every refresh, kept here only), up to `--old-up-to` rows and scaled by size above.

    .venv/bin/python bench/console_render.py [--sizes 10000,100000] [--ticks N] [--old-up-to N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual._compositor import CompositorUpdate
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from bench.seed import publish_approval, seed_approvals
from console.app import ApcApp
from console.client.engine_thread import EngineThread
from console.panes.work import COLUMNS
from console.widgets.virtual_table import VirtualTable
from demo.actors.people import PeopleBehaviour
from demo.fronts.terminal import begin, begin_when_up, build_app
from demo.system import DemoSettings, DemoSystem
from demo.world.org import ROLES

SIZE = (160, 48)
STARTED_SECONDS = 3.0
"""How long the demo runs after its start before the rest is measured: its start-up (agents
connecting, the first burst of runs) is over, as it was when the demo started before the console."""
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


def change_one_percent(items: list[dict[str, Any]], rng: random.Random, tick: int) -> None:
    for index in rng.sample(range(len(items)), max(1, len(items) // 100)):
        item = items[index]["workItem"]
        items[index] = {**items[index], "workItem": {**item, "text": f"{item['text']} (update {tick})"}}


class Stalls:
    """The longest the event loop went without running a heartbeat: the worst frame input waited for;
    and the most CPU time the console's thread spent between two heartbeats: the console's own share
    of it (the rest is waiting for the CPU or the interpreter lock, on a loaded machine)."""

    def __init__(self) -> None:
        self.worst = self.worst_cpu = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        last, last_cpu = time.perf_counter(), time.thread_time()
        while True:
            await asyncio.sleep(0)
            now, cpu = time.perf_counter(), time.thread_time()
            self.worst = max(self.worst, now - last)
            self.worst_cpu = max(self.worst_cpu, cpu - last_cpu)
            last, last_cpu = now, cpu

    async def around(self, work: Callable[[], Awaitable[object]]) -> tuple[float, float]:
        """(the worst frame, the most CPU the console spent in one) while `work` runs."""
        self.worst = self.worst_cpu = 0.0
        self._task = asyncio.create_task(self._beat())
        try:
            await work()
        finally:
            self._task.cancel()
        return self.worst, self.worst_cpu


@asynccontextmanager
async def demo_world(count: int) -> AsyncIterator[tuple[DemoSystem, EngineThread, list[str]]]:
    """A live demo on a thread of its own, as `apc demo` runs it (agents, people, events and a stream
    of runs at 90x), with `count` approvals seeded in bulk for a demo group the operator is in (its
    demo people decide some of them as the bench runs, as they would). The demo is opened, not
    started: the caller starts it (`begin`) as `apc demo` does."""
    thread = EngineThread("bench-demo")
    settings = DemoSettings(port=0, people=PeopleBehaviour(play_operator=False))
    try:
        system = await thread.run(DemoSystem.open(settings))
        try:

            async def seed() -> list[str]:
                await publish_approval(system.engine, system.data_dir / "bulk", ROLES[-1])
                return await seed_approvals(system.engine, system.clock, count)

            ids = await thread.run(seed())
            yield system, thread, ids
        finally:
            await thread.run(system.close())
    finally:
        await thread.stop()


class Frames:
    """Every frame the app hands its driver, timed when written. Headless, Textual skips the write
    itself, so the frame's terminal text is rendered here, as the driver's write would need it."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._waiting: tuple[Callable[[], bool], asyncio.Future[tuple[float, float]]] | None = None
        display = app._display

        def written(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            if renderable is None:
                return
            if isinstance(renderable, CompositorUpdate):
                renderable.render_segments(app.console)
            if self._waiting is not None and self._waiting[0]() and not self._waiting[1].done():
                self._waiting[1].set_result((time.perf_counter(), time.thread_time()))

        app._display = written  # type: ignore[method-assign]

    async def first_showing(self, shown: Callable[[], bool], limit: float = 30.0) -> tuple[float, float]:
        """When the first frame written after `shown()` came true was written (`perf_counter`), and
        the console thread's CPU time then (`thread_time`)."""
        future: asyncio.Future[tuple[float, float]] = asyncio.get_running_loop().create_future()
        self._waiting = (shown, future)
        try:
            return await asyncio.wait_for(future, limit)
        finally:
            self._waiting = None


Figures = tuple[float, float, float, float, float, float]


class Bare(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("Hello")


async def bare_first_render() -> float:
    """A bare Textual app with one Static: from app start to its first frame written."""
    app = Bare()
    frames = Frames(app)
    started = time.perf_counter()
    async with app.run_test(size=SIZE):
        shown, _ = await frames.first_showing(lambda: True)
    return shown - started


def console_app(system: DemoSystem, thread: EngineThread) -> ApcApp:
    app = build_app(system, thread.run)
    app.live = False  # the bench drives the ticks
    app.animation_level = "none"
    return app


async def console_figures(count: int, ticks: int) -> tuple[Figures, float, dict[str, float], float]:
    """The figures, the first render from app start of a console opened on the running demo, the
    demo's pace while measured, and the share of a core its thread took with the console idle."""
    started = time.perf_counter()
    async with demo_world(count) as (system, thread, ids):
        print(f"  seeded {count:,} runs in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        app = console_app(system, thread)
        frames = Frames(app)
        starting = asyncio.create_task(begin_when_up(app, lambda: thread.run(begin(system))))
        started = time.perf_counter()
        async with app.run_test(size=SIZE) as pilot:
            await app.ready.wait()  # set after the frame showing the first page
            first = time.perf_counter() - started
            await starting
            demo_cpu = await demo_share(thread, STARTED_SECONDS)
            demo_began, done_before = time.perf_counter(), demo_counts(system)
            table = app.main.work.table
            # the queue read and drawn again from nothing, the app being up: the console's own part
            app.lists.forget()
            app.main.work.forget()
            began = time.perf_counter()
            await app.reload_all()
            reread = (await frames.first_showing(lambda: True))[0] - began
            assert table.row_count >= 100 and table.current_key is not None
            rng = random.Random(7)
            stalls = Stalls()
            worst = worst_cpu = latency = latency_cpu = 0.0
            open_ids = list(ids)
            for _ in range(ticks):
                gone = rng.sample(range(len(open_ids)), max(1, len(open_ids) // 100))
                gone += [i for i in range(5) if i not in gone]  # some of them on screen
                await thread.run(cancel(system, [open_ids[index] for index in gone]))
                went = set(gone)
                open_ids = [run_id for i, run_id in enumerate(open_ids) if i not in went]

                async def tick() -> None:
                    await app.reload_all(full=False)
                    await pilot.pause()

                frame, frame_cpu = await stalls.around(tick)
                worst, worst_cpu = max(worst, frame), max(worst_cpu, frame_cpu)
                # `j` pressed as a refresh starts: how long until the frame showing the move is written
                app.reload_soon()
                began, began_cpu = time.perf_counter(), time.thread_time()
                with moves_to(table) as moved:
                    app.simulate_key("j")
                    shown, shown_cpu = await frames.first_showing(
                        lambda moved=moved: bool(moved) and table.current_key == moved[0]  # type: ignore[misc]
                    )
                latency, latency_cpu = max(latency, shown - began), max(latency_cpu, shown_cpu - began_cpu)
                await app.workers.wait_for_complete()
        again = console_app(system, thread)
        gc.collect()  # the garbage of the ticks above is not this render's to collect
        started = time.perf_counter()
        async with again.run_test(size=SIZE):
            await again.ready.wait()
            running = time.perf_counter() - started
            # its start-up workers read on after the first frame: let them end before the app does
            await again.workers.wait_for_complete()
        pace = demo_pace(done_before, demo_counts(system), time.perf_counter() - demo_began)
    return (first, reread, worst, worst_cpu, latency, latency_cpu), running, pace, demo_cpu


@contextmanager
def moves_to(table: VirtualTable) -> Iterator[list[str | None]]:
    """The row `j` moved the cursor to, as the table handled it. Taken as the key is handled, not
    before it is sent: the refresh it races may take the row below the cursor away first (a demo
    person decides it), and `j` then rightly moves to the next one."""
    moved: list[str | None] = []
    down = table.action_cursor_down

    def recorded() -> None:
        down()
        moved.append(table.current_key)

    table.action_cursor_down = recorded  # type: ignore[method-assign]
    try:
        yield moved
    finally:
        del table.action_cursor_down


async def demo_share(thread: EngineThread, seconds: float) -> float:
    """Wait `seconds`, the console idle, and say what share of a core the demo's thread used meanwhile:
    the demo's own cost (its loops, the engine work they ask for), which the console's thread shares
    the interpreter with."""

    async def cpu() -> float:
        return time.thread_time()

    began, began_cpu = time.perf_counter(), await thread.run(cpu())
    await asyncio.sleep(seconds)
    return (await thread.run(cpu()) - began_cpu) / (time.perf_counter() - began)


def demo_counts(system: DemoSystem) -> dict[str, int]:
    """What the demo has done so far; the difference over the measured part is its pace then."""
    return {
        "runs started": len(system.starter.started),
        "decisions by demo people": sum(system.people.decisions.values()),
        "events sent": system.events.sent["in_time"] + system.events.sent["late"],
        "steps submitted by demo agents": sum(a.submitted for a in system.control.agents),
    }


def demo_pace(before: dict[str, int], after: dict[str, int], seconds: float) -> dict[str, float]:
    """What the demo did a real minute while the console was measured: a demo stalled by its own
    loops (reading every seeded run) would cost the console little, so the figures mean little
    without it."""
    return {what: (after[what] - before[what]) * 60 / seconds for what in after}


async def cancel(system: DemoSystem, run_ids: list[str]) -> None:
    """Cancel these runs (one a demo person decided meanwhile answers an error, and stays as it is)."""
    for run_id in run_ids:
        await system.engine.call(
            system.operator, "cancel", {"runId": run_id, "reason": "bench", "requestId": f"c-{run_id}"}
        )


class NaiveTable(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row")


async def baseline_figures(count: int, ticks: int) -> Figures:
    items = [make_item(n) for n in range(count)]
    app = NaiveTable()
    frames = Frames(app)

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
        worst = worst_cpu = latency = latency_cpu = 0.0

        def refill() -> None:
            table.clear()
            table.add_rows(rows())

        for tick in range(ticks):
            change_one_percent(items, rng, tick)

            async def refresh() -> None:
                refill()
                await pilot.pause()

            frame, frame_cpu = await stalls.around(refresh)
            worst, worst_cpu = max(worst, frame), max(worst_cpu, frame_cpu)
            table.move_cursor(row=0)
            await pilot.pause()
            app.call_later(refill)
            began, began_cpu = time.perf_counter(), time.thread_time()
            app.simulate_key("down")  # DataTable's own key for what `j` does in the console
            shown, shown_cpu = await frames.first_showing(lambda: table.cursor_row == 1, limit=1800.0)
            latency, latency_cpu = max(latency, shown - began), max(latency_cpu, shown_cpu - began_cpu)
    return first, reread, worst, worst_cpu, latency, latency_cpu


LABELS = (
    "first render from app start",
    "first render of the queue, app up",
    "worst refresh frame",
    "worst refresh frame, console thread CPU",
    "key latency j during refresh",
    "key latency j during refresh, console thread CPU",
)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated open item counts, ascending")
    parser.add_argument("--ticks", type=int, default=3)
    parser.add_argument(
        "--old-up-to",
        type=int,
        default=10_000,
        help="largest size the old DataTable is measured at (the first size always is: every figure has a baseline)",
    )
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    found: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = {}
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for size in sizes:
        gc.collect()  # the size before leaves its garbage behind, not in this size's figures
        bare = await bare_first_render()
        ours, running, pace, demo_cpu = await console_figures(size, options.ticks)
        print(
            f"# {size:,} open work items at {SIZE[0]}x{SIZE[1]}, embedded, {options.ticks} ticks of 1% changed"
        )
        for label, mine in zip(LABELS, ours, strict=True):
            print(f"virtual table {label} {size}: {mine * 1000:.1f} ms", flush=True)
        print(f"virtual table first render from app start, demo running {size}: {running * 1000:.1f} ms")
        print(f"bare Textual app first render from app start {size}: {bare * 1000:.1f} ms")
        print(f"demo thread CPU, console idle {size}: {demo_cpu * 100:.1f} % of a core")
        for what, rate in pace.items():
            print(f"demo {what} while measured {size}: {rate:.1f} /min")
        print(
            f"ratio virtual table / bare Textual app first render from app start {size}: {ours[0] / bare:.2f}"
        )
        print(
            f"ratio virtual table / bare Textual app first render from app start, demo running {size}: "
            f"{running / bare:.2f}",
            flush=True,
        )
        measured = [s for s in found if s <= options.old_up_to]
        theirs: tuple[float, ...]
        if size <= options.old_up_to or not measured:
            theirs = await baseline_figures(size, options.ticks)
            found[size] = (ours, theirs)
            scaled = ""
        else:
            at = max(measured)
            theirs = tuple(figure * size / at for figure in found[at][1])
            found[size] = (ours, theirs)
            scaled = f" (scaled from {at:,}, not measured)"
        for label, mine, base in zip(LABELS, ours, theirs, strict=True):
            print(f"old DataTable {label} {size}{scaled}: {base * 1000:.1f} ms")
            print(f"ratio virtual/old {label} {size}: {mine / base:.2f}", flush=True)
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        for index, label in enumerate(LABELS):
            ratio = found[large][0][index] / found[small][0][index]
            print(f"ratio {large // 1000}k/{small // 1000}k virtual table {label}: {ratio:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
