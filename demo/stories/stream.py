"""The demo's story line: a steady stream of new runs of the sample processes, and the judgement of
how each run ended.

Runs start at a steady pace on the demo clock. The first round shows each process once, the ones with
parallel forks early, so the first minute already has a fork, then one run for each input condition
the scripted check answers name (`when.inputs`), so the first minutes show a check pass, refuse and
hold work; later rounds are shuffled. Inputs are drawn by the relations file (world/scene.py), person
inputs name demo people (so person paths resolve), and a share run in `test` mode. A run ended well when its outcome is one of
its process's finish outcomes, or `rejected` or `failed` where the process allows them.
"""

from __future__ import annotations

import random
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from console.client.wire import RunMode
from demo.actors.calls import Caller, as_person
from demo.world.relations import Relations
from demo.world.scene import Scene, settle
from demo.world.values import JsonObject
from engine.document.fields import check_values
from engine.document.model import Process
from engine.identity import Identity

SHOWCASE_FIRST = ("production-change-release", "new-hire-laptop", "purchase-order-approval")


def allowed_outcomes(process: Process) -> frozenset[str]:
    """Outcomes a run of `process` may end with.

    Its finish outcomes; `failed`, since a person may fail any work item or escalation and a person
    path may resolve to nobody; `rejected` when an approval has no `on_reject` to go back to.
    """
    outcomes = {str(step.value) for step in process.steps if step.kind == "finish"}
    outcomes.add("failed")
    if any(step.kind == "approve" and step.on_reject is None for step in process.steps):
        outcomes.add("rejected")
    return frozenset(outcomes)


Showcase = tuple[str, JsonObject]
"""A run to start early: the process and the inputs it must have."""


def scripted_showcase(answers: Path, processes: Mapping[str, Process]) -> list[Showcase]:
    """One run for each distinct `when.inputs` of a scripted answers file, in file order.

    Conditions on a process not published, or naming inputs it does not declare or values they do
    not accept, are left out: the file serves the evaluator first, the story only borrows from it.
    """
    doc = tomllib.loads(answers.read_text(encoding="utf-8"))
    found: list[Showcase] = []
    for entry in doc.get("answer", []):
        if not isinstance(entry, dict):
            continue
        when = entry.get("when")
        inputs = when.get("inputs") if isinstance(when, dict) else None
        process = processes.get(str(entry.get("process")))
        if not isinstance(inputs, dict) or not inputs or process is None:
            continue
        declared = {f.name: f for f in process.inputs}
        if any(
            name not in declared or check_values((declared[name],), {name: v}, "inputs")
            for name, v in inputs.items()
        ):
            continue
        if (process.name, inputs) not in found:
            found.append((process.name, dict(inputs)))
    return found


@dataclass
class Started:
    run_id: str
    process: str
    mode: RunMode


@dataclass
class RunStarter:
    """Starts runs one after another, as people of the org, cycling through the processes."""

    engine: Caller
    processes: dict[str, Process]
    starters: Sequence[Identity]
    people: Sequence[str]
    """Who a `person` input may name."""
    test_share: float = 0.2
    seed: int = 0
    showcase: Sequence[Showcase] = ()
    """Runs the first round starts after the forks, with the inputs given (see `scripted_showcase`)."""
    relations: Relations = field(default_factory=Relations)
    started: list[Started] = field(default_factory=list)
    refused: list[tuple[str, list[str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.seed}:story")
        self._queue: list[Showcase] = []
        self._round = 0
        self._drafted = 0

    def next_run(self) -> Showcase:
        """The next process to start, and the inputs it must have."""
        if not self._queue:
            names = sorted(self.processes)
            if self._round == 0:
                first: list[Showcase] = [(n, {}) for n in SHOWCASE_FIRST if n in self.processes]
                first += [(n, dict(given)) for n, given in self.showcase if n in self.processes]
                shown = {n for n, _ in first}
                rest = [n for n in names if n not in shown]
                self.rng.shuffle(rest)
                self._queue = first + [(n, {}) for n in rest]
            else:
                self.rng.shuffle(names)
                self._queue = [(n, {}) for n in names]
            self._round += 1
        return self._queue.pop(0)

    def inputs_for(self, process: Process, now: datetime, given: JsonObject) -> JsonObject:
        """Inputs for a new run of `process`: `given` ones as they are, the rest drawn to agree with them."""
        self._drafted += 1
        scene = Scene(
            process.name,
            f"{self.seed}:start {self._drafted}",
            now,
            {"inputs": {}},
            process.body,
            tuple(self.people),
            self.relations,
        )
        return settle(process.inputs, scene, "inputs", given, fixed=given, include_optional=0.6)

    async def start_one(self, now: datetime) -> Started | None:
        name, given = self.next_run()
        return await self.start(name, self.inputs_for(self.processes[name], now, given))

    async def start(self, name: str, inputs: JsonObject, mode: RunMode | None = None) -> Started | None:
        """Start a run of `name` with `inputs`, as one of the starters; `mode` drawn when not given."""
        drawn: RunMode = "test" if self.rng.random() < self.test_share else "live"
        mode = mode or drawn
        starter = self.rng.choice(list(self.starters))
        result = await as_person(self.engine, starter).start_run(name, inputs, mode=mode)
        if not result["ok"]:
            self.refused.append((name, list(result["error"].get("issues") or [result["error"]["message"]])))
            return None
        started = Started(result["data"]["run"]["id"], name, mode)
        self.started.append(started)
        return started
