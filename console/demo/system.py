"""Everything a live demo runs, wired together: a fresh engine with the sample processes published,
its MCP endpoint on 127.0.0.1, demo agents connected to it over MCP, demo people, the event feed, the
timer tick and the stream of new runs, all on one fast demo clock. Model checks are answered by the
scripted evaluator from sample_processes/check-answers.toml, so the demo needs no model.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from console.demo.agent import AgentBehaviour, DemoAgent
from console.demo.control import DemoControl
from console.demo.events import EventBehaviour, EventSource
from console.demo.link import McpAgentLink
from console.demo.org import REQUESTERS, DemoOrg, build_demo_org
from console.demo.pace import ClockPace
from console.demo.people import DemoPeople, PeopleBehaviour
from console.demo.relations import FILE_NAME, Relations, load_relations
from console.demo.story import RunStarter, scripted_showcase
from console.resources import bundled
from console.samples import publish_samples
from engine.clock import SystemClock
from engine.core import Engine
from engine.document.model import Process
from engine.http.app import RunningServer, bind_socket, start_server
from engine.identity import Identity

log = logging.getLogger("apc.demo")

SAMPLES = bundled("sample_processes")
BASE_LEASE_SECONDS = 600
LEASE_REAL_SECONDS = 5.0
"""At high speeds the lease is stretched to last at least this long in real time, so an MCP round
trip never outlasts a lease by accident; lapses stay deliberate."""
STOP_GRACE_SECONDS = 2.0
MIN_POLL_SECONDS = 0.02
MAX_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class DemoSettings:
    data_dir: Path | None = None
    """None: a fresh temporary folder, removed at the end."""
    speed: float = 90.0
    seed: int = 1
    runs: int | None = None
    """Stop starting runs after this many (headless); None keeps the stream going."""
    agents: int = 3
    start_every_minutes: float = 5.0
    initial_runs: int = 6
    """Runs started at once when the demo begins, so the first minute is already busy."""
    test_share: float = 0.2
    max_open_runs: int = 40
    lease_seconds: int | None = None
    host: str = "127.0.0.1"
    port_start: int = 8765
    port: int | None = None
    """The endpoint's port: None the first free one from `port_start`, 0 any free one."""
    samples: Path = SAMPLES
    check_answers: Path | None = Path("check-answers.toml")
    """Scripted check answers, relative to `samples`; the demo org gets the scripted evaluator when
    the file exists. None: no evaluator, so processes with a `check` are not published."""
    relations: Path = Path(FILE_NAME)
    """How generated values hang together (relations.py), relative to `samples`; none when missing."""
    poll_minutes: float = 0.5
    """Demo minutes between two looks at the queues and timers (bounded in real time, see `poll_seconds`)."""
    agent: AgentBehaviour = field(default_factory=AgentBehaviour)
    people: PeopleBehaviour = field(default_factory=PeopleBehaviour)
    events: EventBehaviour = field(default_factory=EventBehaviour)

    @property
    def poll_seconds(self) -> float:
        """Real seconds between polls: a fixed share of demo time, so no step waits long on a poll at
        high speed, and the server is not hammered at low speed."""
        return min(max(self.poll_minutes * 60 / self.speed, MIN_POLL_SECONDS), MAX_POLL_SECONDS)

    @property
    def answers(self) -> Path | None:
        """The answers file the evaluator reads, or None for a demo without one."""
        if self.check_answers is None:
            return None
        path = self.samples / self.check_answers
        return path if path.is_file() else None

    @property
    def lease(self) -> int:
        if self.lease_seconds is not None:
            return self.lease_seconds
        return max(BASE_LEASE_SECONDS, round(self.speed * LEASE_REAL_SECONDS))


class DemoSystem:
    def __init__(
        self,
        settings: DemoSettings,
        engine: Engine,
        org: DemoOrg,
        clock: SystemClock,
        server: RunningServer,
        data_dir: Path,
        own_dir: bool,
        relations: Relations | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.org = org
        self.clock = clock
        self.server = server
        self.data_dir = data_dir
        self._own_dir = own_dir
        self.pace = ClockPace(clock, settings.speed)
        self.control = DemoControl()
        self.processes: dict[str, Process] = {}
        self.refused: dict[str, list[str]] = {}
        self.failures: list[str] = []
        self.relation_problems: list[str] = []
        """Places the relations file names that the published processes do not have."""
        self._tasks: list[asyncio.Task[None]] = []
        self.relations = relations or Relations()
        self.starter = RunStarter(
            engine,
            self.processes,
            starters=[Identity("person", who) for who in REQUESTERS] + [org.operator],
            people=org.person_pool,
            test_share=settings.test_share,
            seed=settings.seed,
            relations=self.relations,
        )
        self.agents = [
            DemoAgent(
                name,
                partial(McpAgentLink, server.url, org.tokens[name]),
                self.pace,
                behaviour=replace(settings.agent, idle_seconds=settings.poll_seconds),
                seed=settings.seed,
                control=self.control,
                people=org.person_pool,
                relations=self.relations,
            )
            for name in org.agents
        ]
        self.people = DemoPeople(
            engine, org, self.pace, behaviour=settings.people, seed=settings.seed, relations=self.relations
        )
        self.events = EventSource(
            engine, org.event_feed, self.pace, behaviour=settings.events, seed=settings.seed
        )

    @classmethod
    async def open(cls, settings: DemoSettings) -> DemoSystem:
        relations = load_relations(settings.samples, str(settings.relations))
        own_dir = settings.data_dir is None
        data_dir = settings.data_dir or Path(tempfile.mkdtemp(prefix="apc-demo-"))
        clock = SystemClock(settings.speed)
        org = build_demo_org(settings.agents, lease_seconds=settings.lease, check_answers=settings.answers)
        sock = bind_socket(settings.host, settings.port, first=settings.port_start)
        try:
            engine = await Engine.open(
                data_dir,
                org.org,
                clock=clock,
                public_base_url=f"http://{settings.host}:{sock.getsockname()[1]}",
            )
        except BaseException:
            sock.close()
            raise
        try:
            server = await start_server(engine, settings.host, sock=sock)
        except BaseException:
            await engine.close()
            raise
        system = cls(settings, engine, org, clock, server, data_dir, own_dir, relations)
        try:
            published, refused = await publish_samples(engine, settings.samples)
        except BaseException:
            await system.close()
            raise
        system.processes.update(published)
        system.refused.update(refused)
        system.relation_problems = relations.problems(published)
        if settings.answers is not None:
            system.starter.showcase = scripted_showcase(settings.answers, published)
        return system

    @property
    def operator(self) -> Identity:
        return self.org.operator

    def start(self) -> None:
        """Start every background part: timers, notification delivery, agents, people, events and the
        stream of runs."""
        self.engine.start_delivery()
        self._spawn("tick", self._tick())
        for agent in self.agents:
            self._spawn(f"agent {agent.name}", agent.run())
        self._spawn("people", self.people.run(self.settings.poll_seconds))
        self._spawn("events", self.events.run(self.settings.poll_seconds))
        self._spawn("runs", self._stream())

    async def close(self) -> None:
        """Stop every part; agents first let the call they have in flight finish."""
        for agent in self.agents:
            agent.stop()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._calls_done(), STOP_GRACE_SECONDS)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        await self.server.stop()
        await self.engine.close()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    async def _calls_done(self) -> None:
        while any(agent.in_call for agent in self.agents):
            await asyncio.sleep(0.01)

    def _spawn(self, name: str, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work, name=f"demo {name}")
        task.add_done_callback(lambda t: self._ended(name, t))
        self._tasks.append(task)

    def _ended(self, name: str, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error("demo %s stopped: %r", name, error, exc_info=error)
            self.failures.append(f"{name}: {error!r}")

    async def _tick(self) -> None:
        while True:
            await self.engine.tick()
            await asyncio.sleep(self.settings.poll_seconds)

    async def _stream(self) -> None:
        """Start runs at a steady pace on the demo clock, up to `runs`, keeping at most `max_open_runs` open."""
        if not self.processes:
            return
        limit = self.settings.runs
        burst = self.settings.initial_runs if limit is None else min(self.settings.initial_runs, limit)
        for _ in range(burst):
            await self.starter.start_one(self.clock.now())
        while limit is None or len(self.starter.started) < limit:
            await self.pace.wait(self.settings.start_every_minutes * 60)
            if await self._open_runs() < self.settings.max_open_runs:
                await self.starter.start_one(self.clock.now())

    async def _open_runs(self) -> int:
        count = 0
        for state in ("active", "waiting"):
            page = await self.engine.call(self.operator, "list_runs", {"state": state, "limit": 100})
            if page["ok"]:
                count += len(page["data"]["items"])
        return count
