"""Remote mode at scale: how many `tools/call` requests the console makes, and how soon its first full
screen is up, against a server whose person has 10,000 open work items.

The server (our engine with `apc serve`'s extra tools, over real HTTP on 127.0.0.1) and the console
(Textual's headless `run_test` at 160x48, on the work queue, live refresh every 2 s) run in this
process. The work items are seeded in bulk through the store, as bench/engine_scale.py does. Every
tool call the server answers is counted: while the console is idle (from when the start-up reads that
date the first screen's rows are done: those are counted apart), then after `p` (pause). The same
is measured with the console's SDK client and with the hand-written client it used before
(bench/old_mcp_client.py, the baseline), in the same run.

    .venv/bin/python bench/console_remote.py [--items 10000] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import textwrap
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.old_mcp_client import McpAuthError, McpError, McpHttpClient
from console.app import ApcApp
from console.client.base import ToolClient, Who
from console.client.envelope import failure
from console.client.remote import RemoteClient
from console.live.session import Session
from console.settings.config import ConsoleConfig
from engine.clock import SystemClock
from engine.core import Engine
from engine.http.app import first_free_port, start_server
from engine.http.standard_extras import standard_extras
from engine.identity import Identity, person
from engine.ids import new_id
from engine.org import OrgConfig
from engine.runtime.derive import derive
from engine.runtime.machine import Machine
from engine.store.state import Run
from engine.tools.context import canonical

PROCESS = """
---
name: review
description: A person reviews a ticket.
inputs:
  ticket: string
steps:
  - id: review
    person: reviewer
    approve: Review the ticket.
  - id: done
    finish: done
---
"""
REVIEWER = person("mira@example.com")
TOKEN = "bench-mira-token"
BATCH = 2000
SIZE = (160, 48)
REFRESH_SECONDS = 2.0


class Counted:
    """The engine as the endpoint sees it, counting the tool calls it answers."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.calls = 0
        self.first_call: float | None = None
        self.by_tool: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        self.by_tool[tool] += 1
        if self.first_call is None:
            self.first_call = time.perf_counter()
        return await self.engine.call(identity, tool, arguments)


class OldRemoteClient(ToolClient):
    """The baseline: remote mode as it was, over the hand-written client."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(REVIEWER)
        self._mcp = McpHttpClient(url, token)

    async def call(self, tool: str, arguments: dict[str, object]) -> Any:
        try:
            return await self._mcp.call(tool, arguments)
        except (McpAuthError, McpError) as exc:
            return failure("retry", str(exc))

    async def close(self) -> None:
        await self._mcp.aclose()


async def seed(engine: Engine, count: int) -> None:
    """`count` runs waiting at the reviewer's step, written in bulk as start_run would write them."""
    record, process = await engine.catalog.get("review")  # type: ignore[misc]
    now = engine.clock.now()
    for first in range(0, count, BATCH):
        async with engine.store.transaction() as tx:
            for n in range(first, min(first + BATCH, count)):
                inputs = {"ticket": f"T-{n}"}
                run = Run(new_id("r"), "review", record.version, "live", REVIEWER.id, "", None, inputs)
                machine = Machine(run, process, now, engine.org, record.bindings)
                machine.start()
                await tx.insert_run(run, derive(machine), [("ticket", canonical(inputs["ticket"]))])


async def watch(counted: Counted, client: ToolClient, seconds: float) -> dict[str, float]:
    """First screen time, then calls per minute idle and while paused, for one console."""
    config = ConsoleConfig(refresh_seconds=REFRESH_SECONDS)
    app = ApcApp(Session(client, "remote · bench", close=client.close), config=config, cursor_blink=False)
    counted.calls, counted.first_call = 0, None
    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        ready = time.perf_counter()
        first_screen = ready - started
        from_first_call = ready - (counted.first_call or ready)
        shown = len(app.main.work.entries)
        at_ready = counted.calls
        while any(w.group == "start" and not w.is_finished for w in app.workers):
            await asyncio.sleep(0.05)  # the first screen's rows dated: a get_run per run, once
        settled = counted.calls
        counted.by_tool.clear()
        await asyncio.sleep(seconds)
        idle = counted.calls
        by_tool = dict(counted.by_tool)
        await pilot.press("p")
        paused_from = counted.calls
        await asyncio.sleep(seconds)
        paused = counted.calls - paused_from
    return {
        "first screen": first_screen,
        "from first call": from_first_call,
        "items shown": shown,
        "calls to first screen": at_ready,
        "calls dating the first screen": settled - at_ready,
        "idle per minute": (idle - settled) * 60 / seconds,
        **{f"idle per minute {tool}": count * 60 / seconds for tool, count in sorted(by_tool.items())},
        "paused per minute": paused * 60 / seconds,
    }


async def measure(root: Path, items: int, seconds: float) -> dict[str, dict[str, float]]:
    folder = root / "review"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(textwrap.dedent(PROCESS).lstrip())
    org = OrgConfig.build(groups={"g_review": [REVIEWER.id]}, people={REVIEWER.id: TOKEN}, agents={})
    port = first_free_port()
    engine = await Engine.open(
        root / "data", org, clock=SystemClock(), public_base_url=f"http://127.0.0.1:{port}"
    )
    try:
        assert (await engine.publish(folder, {"reviewer": "g_review"})).ok
        seeded = time.perf_counter()
        await seed(engine, items)
        print(f"seeded: {items} open work items in {time.perf_counter() - seeded:.1f} s", flush=True)
        counted = Counted(engine)
        server = await start_server(counted, port=port, extra_tools=standard_extras(engine))
        try:
            who = Who("person", REVIEWER.id, REVIEWER.id, False)
            clients: dict[str, Callable[[], ToolClient]] = {
                "old client": lambda: OldRemoteClient(server.url, TOKEN),
                "SDK client": lambda: RemoteClient(server.url, TOKEN, who=who),
            }
            return {label: await watch(counted, make(), seconds) for label, make in clients.items()}
        finally:
            await server.stop()
    finally:
        await engine.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000, help="open work items of the person (10000)")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds idle, then paused (30)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = asyncio.run(measure(Path(tmp), args.items, args.seconds))
    for label, figures in results.items():
        print(f"{label} first full screen from launch: {figures['first screen']:.2f} s")
        print(f"{label} first full screen from the first call: {figures['from first call']:.2f} s")
        print(f"{label} work items on the first screen: {figures['items shown']:.0f} items")
        print(f"{label} tools/call to the first screen: {figures['calls to first screen']:.0f} calls")
        print(
            f"{label} tools/call dating the first screen's rows: {figures['calls dating the first screen']:.0f} calls"
        )
        print(f"{label} tools/call idle: {figures['idle per minute']:.0f} calls/min")
        for key in [k for k in figures if k.startswith("idle per minute ")]:
            print(
                f"{label} tools/call idle, {key.removeprefix('idle per minute ')}: {figures[key]:.0f} calls/min"
            )
        print(f"{label} tools/call paused: {figures['paused per minute']:.0f} calls/min")
    old, new = results["old client"], results["SDK client"]
    print(f"ratio first full screen SDK / old client: {new['from first call'] / old['from first call']:.2f}")
    if old["idle per minute"]:
        print(f"ratio idle calls SDK / old client: {new['idle per minute'] / old['idle per minute']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
