"""What the presenter and the stories tell the demo world, and what the demo's actors ask before acting.

Two things live here. **Leave this to me**: a run, or one step of a run, the presenter took over; demo
people never decide its work items while it is on (a step's protection covers every work item the
step opens in the run: a rework's new approval, an escalation after a return). **Cues**: for a run
the stage or a story started, what each step does, so a moment happens when it is asked for and a
story plays the same every time: an agent escalates, misjudges the verdict its check catches, hands
in something incomplete, or lets its lease lapse for another agent to pick up; an output value is
pinned; an approver rejects once; an event comes in time or late. A step of a cued run that has no
cue of its own is worked plainly (no habit of the agents or people), so nothing else varies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from console.client.wire import Decision
from demo.world.values import JsonObject

Fate = Literal["normal", "escalate", "misjudge", "incomplete", "lapse"]
FATES: tuple[Fate, ...] = ("normal", "escalate", "misjudge", "incomplete", "lapse")
PLAIN_THINK_MINUTES = 2.0
"""How long a demo person takes over an item of a cued run: short and always the same."""


@dataclass(frozen=True)
class Cue:
    """What one step of a cued run does."""

    fate: Fate = "normal"
    """What the agent working the step does with its first attempt."""
    pin: JsonObject = field(default_factory=dict)
    """Output values the step has, whoever works it."""
    decision: Decision | None = None
    """What a demo person decides on the step's work item: `rejected` rejects an approval once (then
    approves), `approved`, `completed`. None: the plain decision (approve, complete)."""
    late: bool = False
    """A `wait_for` step's event comes only after its timeout."""


@dataclass
class Cued:
    """A run started by the stage or a story, and its cues."""

    run_id: str
    moment: str
    cues: dict[str, Cue] = field(default_factory=dict)


class Director:
    def __init__(self) -> None:
        self._left_runs: set[str] = set()
        self._left_steps: set[tuple[str, str]] = set()
        self._cued: dict[str, Cued] = {}
        self._lapsed: dict[tuple[str, str], str] = {}
        self._rejected: set[tuple[str, str]] = set()
        self.version = 0
        """Bumped on every change, so a view can tell whether to redraw."""

    # --- leave this to me ---------------------------------------------------------------------------

    def leave(self, run_id: str, step_id: str | None = None) -> bool:
        """Toggle: the run (or one step of it) is the presenter's, or no longer. True when now on."""
        self.version += 1
        if step_id is None:
            if run_id in self._left_runs:
                self._left_runs.discard(run_id)
                return False
            self._left_runs.add(run_id)
            return True
        key = (run_id, step_id)
        if key in self._left_steps:
            self._left_steps.discard(key)
            return False
        self._left_steps.add(key)
        return True

    def is_left(self, run_id: str, step_id: str | None = None) -> bool:
        """Whether demo people must leave this run's (or this step's) work items alone."""
        return run_id in self._left_runs or (step_id is not None and (run_id, step_id) in self._left_steps)

    @property
    def left(self) -> list[str]:
        """What is left to the presenter: run ids, and `run id · step id`."""
        return sorted(self._left_runs) + sorted(f"{r} · {s}" for r, s in self._left_steps)

    # --- cues ---------------------------------------------------------------------------------------

    def cue_run(self, cued: Cued) -> None:
        self._cued[cued.run_id] = cued
        self.version += 1

    def cued(self, run_id: str) -> Cued | None:
        return self._cued.get(run_id)

    @property
    def runs(self) -> list[Cued]:
        return list(self._cued.values())

    def cue(self, run_id: str, step_id: str) -> Cue | None:
        """The step's cue on a cued run (a plain one for a step without its own); None otherwise."""
        cued = self._cued.get(run_id)
        if cued is None:
            return None
        return cued.cues.get(step_id, Cue())

    def fate(self, run_id: str, step_id: str) -> Fate | None:
        """The agent's fate for its attempt: the cue's the first time, plain after a lapse it staged."""
        cue = self.cue(run_id, step_id)
        if cue is None:
            return None
        if cue.fate == "lapse" and (run_id, step_id) in self._lapsed:
            return "normal"
        return cue.fate

    def may_claim(self, agent: str, run_id: str, step_id: str) -> bool:
        """An agent that let a cued lease lapse leaves the step to another agent."""
        return self._lapsed.get((run_id, step_id)) != agent

    def lapsed(self, agent: str, run_id: str, step_id: str) -> None:
        if run_id in self._cued:
            self._lapsed[(run_id, step_id)] = agent
            self.version += 1

    def decision(self, run_id: str, step_id: str, kind: str) -> Decision | None:
        """A demo person's decision on a cued run's item: the cue's, a rejection only once."""
        cue = self.cue(run_id, step_id)
        if cue is None:
            return None
        if cue.decision == "rejected":
            if (run_id, step_id) in self._rejected:
                return "approved"
            self._rejected.add((run_id, step_id))
            return "rejected"
        if cue.decision is not None:
            return cue.decision
        return "approved" if kind == "approve" else "completed"
