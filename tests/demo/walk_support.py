"""A run of a sample process walked without an engine, drafted exactly as the demo's workers draft it.

The property tests generate a thousand runs; through the engine that would take minutes, so this
walks the process model instead: inputs as the run stream draws them, each agent step and task as
`work.draft` makes it (a misjudged verdict refused by the step's check and revised, as the agent
does), an approval rejected once with the note the relations file gives (the rework drafted the way
the agent drafts one), events with data, parallel branches in order. What it records is the run data
`get_run` would show: inputs, and per step its output (or decision) with earlier attempts in history.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from demo.work.draft import draft
from demo.work.revise import CheckLine, Context, revise
from demo.work.rework import Rework
from demo.world.relations import Relations
from demo.world.scene import Scene, settle
from engine.clock import rfc3339
from engine.document.model import Process, Step

PEOPLE = ("mira@example.com", "lena@example.com", "sam@example.com", "operator@example.com")
MAX_STEPS = 60


@dataclass
class Walked:
    process: Process
    started: datetime
    data: dict[str, Any]
    order: list[tuple[str, datetime]] = field(default_factory=list)
    """Each step worked, with the time it was worked, in order (reworks repeat a step)."""
    routes: dict[str, str] = field(default_factory=dict)
    """The route each routing step took last."""
    rejected: str | None = None
    """The approval that rejected once, if one did."""
    misjudged: list[str] = field(default_factory=list)
    """Steps whose first draft misjudged a verdict and was revised after the check refused it."""


@dataclass
class Walker:
    process: Process
    relations: Relations
    seed: int
    misjudge: bool
    reject: bool
    late_events: bool
    now: datetime
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def scene(self, data: dict[str, Any]) -> Scene:
        return Scene(
            self.process.name,
            f"{self.seed}:r_walk",
            self.now,
            data,
            self.process.body,
            PEOPLE,
            self.relations,
        )

    def walk(self) -> Walked:
        start_scene = Scene(
            self.process.name,
            f"{self.seed}:start 1",
            self.now,
            {"inputs": {}},
            self.process.body,
            PEOPLE,
            self.relations,
        )
        inputs = settle(self.process.inputs, start_scene, "inputs", include_optional=0.6)
        walked = Walked(self.process, self.now, {"inputs": inputs, "steps": {}})
        self._from(walked, self.process.steps[0].id)
        return walked

    def _from(self, walked: Walked, step_id: str | None) -> None:
        for _ in range(MAX_STEPS):
            if step_id is None or step_id == "join":
                return
            step = self.process.step(step_id)
            self.now += timedelta(minutes=self.rng.uniform(1, 20))
            if step.kind == "finish":
                return
            walked.order.append((step.id, self.now))
            step_id = self._step(walked, step)
        raise AssertionError(f"{self.process.name}: more than {MAX_STEPS} steps")

    def _step(self, walked: Walked, step: Step) -> str | None:
        steps = walked.data["steps"]
        if step.kind == "parallel":
            for branch in step.branches:
                self._from(walked, branch)
            return step.next
        if step.kind in ("wait", "wait_until"):
            return step.next
        if step.kind == "wait_for":
            if step.timeout and self.late_events:
                return step.on_timeout
            steps[step.id] = {"output": {"receivedAt": rfc3339(self.now), "source": "demo event feed"}}
            return step.next
        if step.kind == "approve":
            if self.reject and walked.rejected is None and step.on_reject is not None:
                return self._rejected(walked, step)
            steps[step.id] = {"decision": "approved", "by": PEOPLE[0], "at": rfc3339(self.now)}
            return step.next
        return self._work(walked, step)

    def _work(self, walked: Walked, step: Step) -> str | None:
        steps = walked.data["steps"]
        requirements: dict[str, Any] = {
            "id": step.id,
            "output": step.output_wire(),
            "evidence": list(step.evidence or ()),
            "next": step.routes_wire(),
        }
        scene = self.scene(walked.data)
        rework = Rework.read(step.id, walked.data, requirements["output"])
        fresh = rework.fresh if rework is not None else None
        work = draft(requirements, self.rng, scene, step_id=step.id, misjudge=self.misjudge, fresh=fresh)
        asks = [q.ask for q in step.check or () if q.kind == "yes_no"]
        honest = draft(requirements, self.rng, scene, step_id=step.id, fresh=fresh)
        if asks and work.output != honest.output:
            walked.misjudged.append(step.id)
            context = Context(walked.data, self.process.body)
            work = revise(work, [CheckLine(asks[0], "no (0.15)")], self.rng, context, turn_over=True).work
        record: dict[str, Any] = {"output": work.output, "by": "agent-a", "at": rfc3339(self.now)}
        history = (steps.get(step.id) or {}).get("history")
        if history:
            record["history"] = history
        if work.choice is not None:
            record["next"] = work.choice.to
            walked.routes[step.id] = work.choice.to
        steps[step.id] = record
        return work.choice.to if work.choice is not None else step.next

    def _rejected(self, walked: Walked, step: Step) -> str | None:
        """Reject once with the step's note; every step worked since the target moves into history."""
        assert step.on_reject is not None
        steps = walked.data["steps"]
        said = self.relations.step(self.process.name, step.id).reject
        note = self.scene(walked.data).render(said[0], self.rng) if said else "Not right; look again."
        worked = [s for s, _ in walked.order]
        since = (
            worked[len(worked) - 1 - worked[::-1].index(step.on_reject) :] if step.on_reject in worked else []
        )
        for sid in dict.fromkeys(since):
            old = steps.get(sid)
            if old is not None and sid != step.id:
                current = {k: v for k, v in old.items() if k != "history"}
                steps[sid] = {"history": [*(old.get("history") or []), current]}
        steps[step.id] = {"decision": "rejected", "note": note, "by": PEOPLE[0], "at": rfc3339(self.now)}
        walked.rejected = step.id
        return step.on_reject
