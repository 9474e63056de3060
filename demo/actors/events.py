"""The demo's outside world: it sends the events `wait_for` steps wait on, mostly in time, some late.

A courier confirming a delivery or a candidate signing an offer is not part of any process; the demo
plays them. When a run is seen waiting on an event, the event is scheduled on the demo clock: most
arrive within the step's `timeout`, a share only after it, so the `on_timeout` path shows too. A late
event is still sent; the run has moved on, and the server holds it or reports the run ended.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from console.client.wire import Envelope, Json, ListRunsResult, RunState, RunSummary
from console.live.paging import PAGE, all_pages
from demo.actors.calls import Caller, as_person
from demo.actors.director import Director
from demo.world.pace import Pace
from engine.clock import rfc3339
from engine.core import Engine
from engine.document import durations
from engine.document.model import Step
from engine.identity import Identity


@dataclass(frozen=True)
class EventBehaviour:
    in_time: tuple[float, float] = (0.2, 0.7)
    """When an in-time event arrives, as a share of the step's timeout."""
    late_share: float = 0.25
    """Events that arrive only after the timeout (steps with a timeout only)."""
    untimed_minutes: tuple[float, float] = (5.0, 20.0)
    """When an event arrives for a step with no timeout."""


@dataclass
class _Planned:
    name: str
    at: datetime
    late: bool


def _cued_plan(name: str, timeout: str | None, now: datetime, late: bool) -> _Planned:
    """A cued run's event: halfway through the timeout, or a fifth past it when cued late."""
    seconds = durations.parse_duration(timeout) if timeout else None
    if not seconds:
        return _Planned(name, now + timedelta(minutes=5), False)
    return _Planned(name, now + timedelta(seconds=seconds * (1.2 if late else 0.5)), late)


class EventSource:
    def __init__(
        self,
        engine: Engine,
        identity: Identity,
        pace: Pace,
        *,
        behaviour: EventBehaviour | None = None,
        seed: int = 0,
        caller: Caller | None = None,
        director: Director | None = None,
    ) -> None:
        self.director = director or Director()
        self.engine = engine
        self.caller: Caller = caller or engine
        self.identity = identity
        self.pace = pace
        self.behaviour = behaviour or EventBehaviour()
        self.rng = random.Random(f"{seed}:events")
        self.sent: Counter[str] = Counter()
        """`in_time`, `late`, and `consumed` (the event completed a waiting step)."""
        self._planned: dict[tuple[str, str], _Planned] = {}
        self._waits: dict[tuple[str, int], dict[str, Step]] = {}
        """(process, version) -> its `wait_for` steps by id."""

    async def run(self, every_seconds: float = 0.5) -> None:
        while True:
            await self.poll()
            await self.pace.idle(every_seconds)

    async def poll(self) -> int:
        """Plan an event for every step newly seen waiting on one; send those that are due."""
        waiting = await self._waiting()
        now = self.pace.now()
        for key, (name, timeout) in waiting.items():
            if key not in self._planned:
                cue = self.director.cue(*key)
                self._planned[key] = (
                    self._plan(name, timeout, now)
                    if cue is None
                    else _cued_plan(name, timeout, now, cue.late)
                )
        sent = 0
        for key, plan in list(self._planned.items()):
            if key not in waiting and not plan.late:
                del self._planned[key]
            elif now >= plan.at:
                await self._send(key[0], plan)
                del self._planned[key]
                sent += 1
        return sent

    def _plan(self, name: str, timeout: str | None, now: datetime) -> _Planned:
        b = self.behaviour
        seconds = durations.parse_duration(timeout) if timeout else None
        if not seconds:
            return _Planned(name, now + timedelta(minutes=self.rng.uniform(*b.untimed_minutes)), False)
        if self.rng.random() < b.late_share:
            return _Planned(name, now + timedelta(seconds=seconds * self.rng.uniform(1.1, 1.4)), True)
        return _Planned(name, now + timedelta(seconds=seconds * self.rng.uniform(*b.in_time)), False)

    async def _send(self, run_id: str, plan: _Planned) -> None:
        data: dict[str, Json] = {"receivedAt": rfc3339(self.pace.now()), "source": "demo event feed"}
        result = await as_person(self.caller, self.identity).send_event(run_id, plan.name, data)
        self.sent["late" if plan.late else "in_time"] += 1
        if result["ok"] and result["data"]["consumedBy"] is not None:
            self.sent["consumed"] += 1

    async def _waiting(self) -> dict[tuple[str, str], tuple[str, str | None]]:
        """(run id, step id) -> (event name, timeout) for every `wait_for` step now waiting."""
        found: dict[tuple[str, str], tuple[str, str | None]] = {}
        calls = as_person(self.caller, self.identity)
        states: tuple[RunState, ...] = ("waiting", "active")
        for name in await self._with_waits():
            for state in states:
                for summary in await self._runs(name, state):
                    events = await self._wait_steps(summary["process"], int(summary["version"]))
                    if not events:
                        continue
                    view = await calls.get_run(summary["id"])
                    if not view["ok"]:
                        continue
                    for step in view["data"]["steps"]:
                        if step["id"] in events and step["state"] == "waiting":
                            declared = events[step["id"]]
                            found[(summary["id"], step["id"])] = (declared.value, declared.timeout)
        return found

    async def _runs(self, process: str, state: RunState) -> list[RunSummary]:
        calls = as_person(self.caller, self.identity)

        async def page(cursor: str | None) -> Envelope[ListRunsResult]:
            return await calls.list_runs(process=process, state=state, limit=PAGE, cursor=cursor)

        return (await all_pages(page))[0]

    async def _with_waits(self) -> list[str]:
        """The processes with a `wait_for` step in any published version: only their runs can wait on
        an event, so only theirs are read: the org's other open runs, however many, cost nothing here."""
        processes, _, _ = await all_pages(as_person(self.caller, self.identity).list_processes)
        names: list[str] = []
        for item in processes:
            name, latest = item["name"], int(item["version"])
            for version in range(latest, 0, -1):
                if await self._wait_steps(name, version):
                    names.append(name)
                    break
        return names

    async def _wait_steps(self, name: str, version: int) -> dict[str, Step]:
        """The `wait_for` steps of a published version by id (none when it is not published), each
        version read from the catalog once."""
        known = self._waits.get((name, version))
        if known is None:
            pinned = await self.engine.catalog.get(name, version)
            steps = pinned[1].steps if pinned is not None else []
            known = self._waits[(name, version)] = {s.id: s for s in steps if s.kind == "wait_for"}
        return known
