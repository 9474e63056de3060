"""Everything a live demo runs, wired together: a fresh engine with the sample processes published,
its MCP endpoint on 127.0.0.1, demo agents connected to it over MCP, demo people, the event feed, the
timer tick and the stream of new runs, all on one fast demo clock. Model checks are answered by the
scripted evaluator from sample_processes/check-answers.toml, so the demo needs no model.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from console.client.wire import RunState
from console.embedded.samples import publish_samples
from console.resources import bundled
from demo.actors.agent import AgentBehaviour, DemoAgent
from demo.actors.calls import as_person
from demo.actors.control import DemoControl
from demo.actors.director import Cued, Director
from demo.actors.events import EventBehaviour, EventSource
from demo.actors.link import McpAgentLink
from demo.actors.people import DemoPeople, PeopleBehaviour
from demo.stories.play import StoryPlayer
from demo.stories.presenter import DemoPresenter, PresenterError, StoryStatus
from demo.stories.stage import moment
from demo.stories.story import Story
from demo.stories.stream import RunStarter, scripted_showcase
from demo.world.org import REQUESTERS, DemoOrg, build_demo_org
from demo.world.pace import ClockPace, ManualPace, Pace
from demo.world.relations import FILE_NAME, Relations, load_relations
from engine.clock import ManualClock, ServerClock, rfc3339
from engine.core import Engine
from engine.document.model import Process
from engine.http.app import RunningServer, bind_socket, start_server
from engine.http.standard_extras import standard_extras
from engine.identity import Identity
from engine.tools.catalog import Catalog
from engine.tools.told import Told

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
    """How generated values hang together (world/relations.py), relative to `samples`; none when missing."""
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


class StageError(Exception):
    """A stage moment this demo cannot show, said in one line."""


def token_identity(agent: str, token: str) -> str:
    """Who the agent's own bearer token makes it on the server, and which token (a fingerprint,
    never the token): `agent-ada · token sha256:1a2b3c4d`."""
    return f"{agent} · token sha256:{hashlib.sha256(token.encode()).hexdigest()[:8]}"


class Gated:
    """The engine as the demo world calls it: while the world is paused, a call waits to be made.

    The operator's own console calls the engine directly, so their actions still work."""

    def __init__(self, engine: Engine, control: DemoControl) -> None:
        self.engine = engine
        self.control = control

    @property
    def catalog(self) -> Catalog:
        return self.engine.catalog

    @property
    def told(self) -> Told:
        return self.engine.told

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        await self.control.wait_world()
        return await self.engine.call(identity, tool, arguments)


class DemoSystem:
    def __init__(
        self,
        settings: DemoSettings,
        engine: Engine,
        org: DemoOrg,
        clock: ManualClock | ServerClock,
        server: RunningServer,
        data_dir: Path,
        own_dir: bool,
        relations: Relations | None = None,
        presenter: DemoPresenter | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.org = org
        self.clock = clock
        self.server = server
        self.data_dir = data_dir
        self._own_dir = own_dir
        self.pace: Pace = ManualPace(clock) if isinstance(clock, ManualClock) else ClockPace(clock)
        self.control = DemoControl()
        self.director = Director()
        self.presenter = presenter or DemoPresenter()
        self.presenter.attach(self)
        self.story: StoryPlayer | None = None
        gated = Gated(engine, control=self.control)
        self.processes: dict[str, Process] = {}
        self.refused: dict[str, list[str]] = {}
        self.failures: list[str] = []
        self.relation_problems: list[str] = []
        """Places the relations file names that the published processes do not have."""
        self._tasks: list[asyncio.Task[None]] = []
        self.relations = relations or Relations()
        self.starter = RunStarter(
            gated,
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
                director=self.director,
                identity=token_identity(name, org.tokens[name]),
            )
            for name in org.agents
        ]
        self.people = DemoPeople(
            gated,
            org,
            self.pace,
            behaviour=settings.people,
            seed=settings.seed,
            relations=self.relations,
            director=self.director,
        )
        self.events = EventSource(
            engine,
            org.event_feed,
            self.pace,
            behaviour=settings.events,
            seed=settings.seed,
            caller=gated,
            director=self.director,
        )

    @classmethod
    async def open(
        cls,
        settings: DemoSettings,
        clock: ManualClock | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> DemoSystem:
        """A demo on a fresh engine (or the data folder given). Its clock is the engine's ServerClock,
        `settings.speed` times real time as `monotonic` counts it, never going backwards for the folder;
        the presenter pauses and speeds it. With a `ManualClock` the demo is conducted turn by turn
        instead (`turn`)."""
        relations = load_relations(settings.samples, str(settings.relations))
        own_dir = settings.data_dir is None
        data_dir = settings.data_dir or Path(tempfile.mkdtemp(prefix="apc-demo-"))
        org = build_demo_org(settings.agents, lease_seconds=settings.lease, check_answers=settings.answers)
        sock = bind_socket(settings.host, settings.port, first=settings.port_start)
        try:
            engine = await Engine.open(
                data_dir,
                org.org,
                clock=clock,
                speed=settings.speed,
                monotonic=monotonic,
                public_base_url=f"http://{settings.host}:{sock.getsockname()[1]}",
            )
        except BaseException:
            sock.close()
            raise
        presenter = DemoPresenter()
        try:
            server = await start_server(
                engine, settings.host, sock=sock, extra_tools=[*standard_extras(engine), presenter.tool()]
            )
        except BaseException:
            await engine.close()
            raise
        used = engine.clock
        assert isinstance(used, ManualClock | ServerClock), "the engine builds a ServerClock when given none"
        system = cls(settings, engine, org, used, server, data_dir, own_dir, relations, presenter)
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

    async def turn(self, seconds: float) -> None:
        """One turn of a conducted demo (a `ManualClock`, nothing running by itself): timers, each
        agent's look for work, the people, the events, then the clock moves on `seconds`.

        Everything happens in the caller's task, one after the other, so the same demo plays the same
        way every time.
        """
        assert isinstance(self.clock, ManualClock), "a conducted demo runs on a ManualClock"
        await self.engine.tick()
        for agent in self.agents:
            await agent.work_once()
        await self.people.poll()
        await self.events.poll()
        self.clock.advance(seconds)

    async def disconnect_agents(self) -> None:
        """Close the agents' MCP links (a conducted demo opened them in the caller's task, one after the
        other, so they close last-opened first: the SDK's task scopes nest)."""
        for agent in reversed(self.agents):
            await agent.disconnect()

    async def stage(self, name: str) -> Cued:
        """Start the stage moment `name` now, on a fresh run: its cues given, its steps left to the
        presenter. StageError when this demo cannot show it."""
        wanted = moment(name)
        process = self.processes.get(wanted.process)
        if process is None:
            raise StageError(f"{wanted.title}: {wanted.process} is not published in this demo")
        if len(self.agents) < wanted.needs_agents:
            raise StageError(f"{wanted.title}: needs {wanted.needs_agents} demo agents")
        inputs = self.starter.inputs_for(process, self.clock.now(), dict(wanted.inputs))
        started = await self.starter.start(wanted.process, inputs, mode=wanted.mode)
        if started is None:
            refused = self.starter.refused[-1][1] if self.starter.refused else []
            raise StageError(f"{wanted.title}: the run was refused: {'; '.join(refused)}")
        cued = Cued(started.run_id, name, dict(wanted.cues))
        self.director.cue_run(cued)
        for step_id in wanted.leave:
            self.director.leave(started.run_id, step_id)
        return cued

    # --- what the presenter controls act on (stories/presenter.py) -----------------------------------------

    @property
    def speed(self) -> float:
        return self.clock.speed if isinstance(self.clock, ServerClock) else self.settings.speed

    def set_speed(self, speed: float) -> None:
        if not isinstance(self.clock, ServerClock):
            raise PresenterError("a conducted demo's clock moves only turn by turn")
        self.clock.set_speed(speed)

    def pause(self) -> None:
        """Every demo actor waits at its next call, and server time stands still: no lease lapses, no
        item goes overdue, no wait ends. The operator's own console still acts."""
        self.control.pause_world()
        if isinstance(self.clock, ServerClock):
            self.clock.pause()

    def resume(self) -> None:
        if isinstance(self.clock, ServerClock):
            self.clock.resume()
        self.control.resume_world()

    async def stage_moment(self, name: str) -> str:
        try:
            cued = await self.stage(name)
        except StageError as exc:
            raise PresenterError(str(exc)) from None
        return f"{moment(name).title}: {cued.run_id}. {moment(name).look}"

    def now_text(self) -> str:
        return rfc3339(self.clock.now())

    def status_line(self) -> str:
        started = len(self.starter.started)
        decisions = sum(self.people.decisions.values())
        events = self.events.sent["in_time"] + self.events.sent["late"]
        agents = self.control.agents
        refused = sum(a.check_refused for a in agents)
        fixed = sum(a.check_fixed for a in agents)
        held = sum(a.held for a in agents)
        return (
            f"{started} runs started · {decisions} decisions by demo people · {events} events sent · "
            f"checks: {refused} refused, {fixed} fixed, {held} held for you"
        )

    def story_status(self) -> StoryStatus | None:
        player = self.story
        if player is None:
            return None
        story = player.story
        done = sum(1 for p in player.progress if p.done)
        return {
            "name": story.name,
            "title": story.title,
            "user": story.user,
            "done": done,
            "moments": len(player.progress),
            "log": player.log[-12:],
            "cues": list(player.cues),
        }

    def play(self, story: Story) -> None:
        """Play `story` beside the console: its moments on time, its acts cued for the presenter."""
        self.story = StoryPlayer(story, self, perform=False, began=self.clock.now())
        self._spawn(f"story {story.name}", self._play(self.story))

    async def _play(self, player: StoryPlayer) -> None:
        while not await player.finished():
            await self.control.wait_world()
            await player.poll()
            await self.pace.idle(self.settings.poll_seconds)

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
            await self.control.wait_world()
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
            if await self.open_runs(self.settings.max_open_runs) < self.settings.max_open_runs:
                await self.starter.start_one(self.clock.now())

    async def open_runs(self, enough: int | None = None) -> int:
        """The open runs (active or waiting) of the demo's own processes, counted up to `enough` when
        given. The org's other runs are not the demo's to pace: however many are open (a big org, or
        a bench's seed), the stream still starts its runs, and they are not read."""
        count = 0
        states: tuple[RunState, ...] = ("active", "waiting")
        for name in sorted(self.processes):
            for state in states:
                cursor: str | None = None
                while enough is None or count < enough:
                    page = await as_person(self.engine, self.operator).list_runs(
                        process=name, state=state, limit=100, cursor=cursor
                    )
                    if not page["ok"]:
                        break
                    count += len(page["data"]["items"])
                    cursor = page["data"]["nextCursor"]
                    if not cursor:
                        break
        return count if enough is None else min(count, enough)
