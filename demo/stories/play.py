"""Playing a story (story.py) on a demo system: moments started when due, the states they name
awaited, acts performed as the story's user (headless) or cued for the presenter (in the console),
and the report of how the runs ended against what the story declares."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from console.client.wire import DecideArguments, DecideDetails, Decision, RunView, WorkItem
from demo.actors.calls import as_person
from demo.actors.director import Cued, Director
from demo.actors.people import DemoPeople
from demo.stories.stage import BY_NAME, open_items, step_state
from demo.stories.story import Story, StoryError, StoryMoment
from demo.stories.stream import RunStarter
from demo.work.draft import draft
from demo.world.org import DemoOrg
from demo.world.relations import Relations
from demo.world.scene import Scene, run_seed
from engine.clock import Clock
from engine.core import Engine
from engine.document.model import Process
from engine.identity import Identity


class System(Protocol):
    """What a player reads and drives of the demo system (demo/system.py, which holds the player)."""

    @property
    def engine(self) -> Engine: ...
    @property
    def org(self) -> DemoOrg: ...
    @property
    def operator(self) -> Identity: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def director(self) -> Director: ...
    @property
    def starter(self) -> RunStarter: ...
    @property
    def processes(self) -> dict[str, Process]: ...
    @property
    def relations(self) -> Relations: ...
    @property
    def people(self) -> DemoPeople: ...

    async def stage(self, name: str) -> Cued: ...


@dataclass
class Progress:
    """A moment's progress in a play."""

    moment: StoryMoment
    run_id: str | None = None
    done: bool = False
    cued: bool = False
    """An act shown to the presenter, waiting for them."""
    item_id: str | None = None
    """The work item an act targets, once open."""
    result: str = ""


@dataclass
class StoryReport:
    story: Story
    lines: list[str] = field(default_factory=list)
    outcomes: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Per expected run: its state and outcome at the end."""
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    """Demo seconds the play took."""

    @property
    def ok(self) -> bool:
        return not self.failures and all(
            self.outcomes.get(e.run) == (e.state, e.outcome if e.state == "ended" else None)
            for e in self.story.expects
        )


class StoryPlayer:
    """Plays a story on a demo system, one `poll` at a time.

    `perform`: the story performs its acts (headless) instead of cueing them for the presenter.
    """

    def __init__(self, story: Story, system: System, *, perform: bool, began: datetime) -> None:
        self.story = story
        self.system = system
        self.perform = perform
        self.began = began
        self.progress = [Progress(m) for m in story.moments]
        self.log: list[str] = []
        """What happened, in order, each line stamped with demo time since the story began."""
        self.cues: list[str] = []
        """Acts waiting for the presenter, in the words shown to them."""

    @property
    def by_name(self) -> dict[str, Progress]:
        return {p.moment.name: p for p in self.progress}

    def elapsed(self) -> float:
        return (self.system.clock.now() - self.began).total_seconds()

    @property
    def moments_done(self) -> bool:
        return all(p.done for p in self.progress)

    async def finished(self) -> bool:
        if not self.moments_done:
            return False
        for expect in self.story.expects:
            run_id = self.by_name[expect.run].run_id
            view = await self._view(run_id) if run_id else None
            if view is None or view["run"]["state"] not in ("ended", "cancelled"):
                return False
        return True

    async def poll(self) -> None:
        """Start what is due, check what was awaited, act (or cue) what can be acted on."""
        for p in self.progress:
            if p.done or not self._due(p):
                continue
            m = p.moment
            if m.starts_run and p.run_id is None:
                await self._start(p)
            elif m.starts_run:
                await self._check_reached(p)
            else:
                await self._act(p)

    def _due(self, p: Progress) -> bool:
        m = p.moment
        if m.at is not None and self.elapsed() < m.at:
            return False
        return m.after is None or self.by_name[m.after].done

    def _say(self, text: str) -> None:
        minutes, seconds = divmod(int(self.elapsed()), 60)
        hours, minutes = divmod(minutes, 60)
        self.log.append(f"[+{hours}:{minutes:02}:{seconds:02}] {text}")

    async def _start(self, p: Progress) -> None:
        m = p.moment
        system = self.system
        if m.stage is not None:
            cued = await system.stage(m.stage)
            p.run_id = cued.run_id
            self._say(f"{m.name}: {BY_NAME[m.stage].title} on {cued.run_id}")
            return
        assert m.start is not None
        process = system.processes.get(m.start.process)
        if process is None:
            raise StoryError(f"moment {m.name!r}: {m.start.process} is not published in this demo")
        inputs = system.starter.inputs_for(process, system.clock.now(), dict(m.start.inputs))
        started = await system.starter.start(m.start.process, inputs, mode=m.start.mode)
        if started is None:
            raise StoryError(f"moment {m.name!r}: the run was refused: {system.starter.refused[-1][1]}")
        system.director.cue_run(Cued(started.run_id, m.name, dict(m.start.cues)))
        for step_id in m.start.leave:
            system.director.leave(started.run_id, step_id)
        p.run_id, p.done = started.run_id, True
        self._say(f"{m.name}: started {m.start.process} {started.run_id}")

    async def _check_reached(self, p: Progress) -> None:
        assert p.moment.stage is not None and p.run_id is not None
        view = await self._view(p.run_id)
        if view is not None and BY_NAME[p.moment.stage].reached(view):
            p.done = True
            self._say(f"{p.moment.name}: {BY_NAME[p.moment.stage].look}")

    async def _act(self, p: Progress) -> None:
        m = p.moment
        assert m.on is not None and m.act is not None
        run_id = self.by_name[m.on].run_id
        if run_id is None:
            return
        view = await self._view(run_id)
        if view is None:
            return
        if p.item_id is None:
            target = self._target(view, m)
            if target is None:
                return
            p.item_id = target
        if not self.perform:
            await self._await_presenter(p, view, run_id)
            return
        result = await self._perform(p, view, run_id)
        p.result = result
        p.done = result == "ok"
        self._say(f"{m.name}: {m.describe()} as {self._actor(view, p).id}: {result}")

    def _target(self, view: RunView, m: StoryMoment) -> str | None:
        """The work item the act decides, once it is open (a cancel's: the run, once the step waits)."""
        if m.act == "cancel":
            if view["run"]["state"] in ("ended", "cancelled"):
                return None
            if m.step is not None and step_state(view, m.step).get("state") not in (
                "waiting",
                "claimed",
                "ready",
            ):
                return None
            return view["run"]["id"]
        assert m.step is not None
        items = open_items(view, m.step)
        if m.act == "return":
            items = [w for w in items if "returned" in w["decide"]["decisions"]]
        elif m.act in ("approve", "reject"):
            items = [w for w in items if "approved" in w["decide"]["decisions"]]
        return items[0]["id"] if items else None

    async def _await_presenter(self, p: Progress, view: RunView, run_id: str) -> None:
        m = p.moment
        if not p.cued:
            p.cued = True
            text = self._cue_text(m, run_id)
            self.cues.append(text)
            self._say(f"{m.name}: your turn: {text}")
        if m.act == "cancel":
            done = view["run"]["state"] == "cancelled"
        else:
            done = all(w["id"] != p.item_id for w in view["workItems"])
        if done:
            p.done = True
            if p.cued and self._cue_text(m, run_id) in self.cues:
                self.cues.remove(self._cue_text(m, run_id))
            self._say(f"{m.name}: done")

    def _cue_text(self, m: StoryMoment, run_id: str) -> str:
        said = {
            "approve": f"approve {m.step} on {run_id}",
            "reject": f"reject {m.step} on {run_id} with the note: {m.note}",
            "return": f"return the escalation of {m.step} on {run_id} with the note: {m.note}",
            "complete": f"complete {m.step} on {run_id}",
            "cancel": f"cancel run {run_id}: {m.reason}",
        }
        return said[m.act or "approve"]

    def _actor(self, view: RunView, p: Progress) -> Identity:
        """Who performs the act: the operator, or for an approver a member of the item's group."""
        org = self.system.org
        if self.story.user != "approver" or p.moment.act == "cancel":
            return org.operator
        item = next((w for w in view["workItems"] if w["id"] == p.item_id), None)
        assigned = item["assignedTo"] if item is not None else None
        if assigned is not None and "person" in assigned:
            return Identity("person", assigned["person"])
        members = org.org.groups.get(assigned["group"], ()) if assigned is not None else ()
        person = next((who for who in members if who != org.operator_email), org.operator_email)
        return Identity("person", person, operator=person == org.operator_email)

    async def _perform(self, p: Progress, view: RunView, run_id: str) -> str:
        m = p.moment
        who = self._actor(view, p)
        tools = as_person(self.system.engine, who)
        if m.act == "cancel":
            assert m.reason is not None  # a story's cancel has its reason (story.py)
            cancelled = await tools.cancel(run_id, m.reason)
            return "ok" if cancelled["ok"] else cancelled["error"]["code"]
        item = next(w for w in view["workItems"] if w["id"] == p.item_id)
        decisions: dict[str, Decision] = {
            "approve": "approved",
            "reject": "rejected",
            "return": "returned",
            "complete": "completed",
        }
        decision = decisions[m.act or "approve"]
        extra: DecideDetails = {"note": m.note} if m.note and decision != "completed" else {}
        if decision == "completed" and "candidate" not in (item["escalation"] or {}):
            extra = self._completion(view, item)
        args: DecideArguments = {**item["decide"]["arguments"], "decision": decision, **extra}
        result = await tools.decide(args)
        return "ok" if result["ok"] else result["error"]["code"]

    def _completion(self, view: RunView, item: WorkItem) -> DecideDetails:
        """The output a person completes an escalated or task item with, drafted from the run."""
        system = self.system
        process = view["run"]["process"]
        data = view["data"]
        scene = Scene(
            process,
            run_seed(self.story.seed, process, data["inputs"]),
            system.clock.now(),
            data,
            view["body"],
            system.org.person_pool,
            system.relations,
        )
        work = draft(item, system.people.rng, scene, step_id=item["stepId"])
        extra: DecideDetails = {"output": work.output, "summary": f"Completed by the {self.story.user}."}
        if work.choice is not None:
            extra["next"], extra["reason"] = work.choice.to, work.choice.reason
        if work.evidence:
            extra["evidence"] = [
                {"kind": "link", "ref": f"https://records.example.com/{process}/{item['stepId']}"}
            ]
        return extra

    async def _view(self, run_id: str | None) -> RunView | None:
        if run_id is None:
            return None
        result = await as_person(self.system.engine, self.system.operator).get_run(run_id)
        return result["data"] if result["ok"] else None

    async def report(self) -> StoryReport:
        out = StoryReport(self.story, list(self.log), seconds=self.elapsed())
        for expect in self.story.expects:
            view = await self._view(self.by_name[expect.run].run_id)
            if view is None:
                out.outcomes[expect.run] = ("not started", None)
                continue
            state = view["run"]["state"]
            out.outcomes[expect.run] = (state, view["run"]["outcome"] if state == "ended" else None)
        out.failures += [
            f"moment {p.moment.name} not done ({p.result or 'waiting'})" for p in self.progress if not p.done
        ]
        return out


def summary_lines(report: StoryReport) -> Iterable[str]:
    story = report.story
    yield ""
    for expect in story.expects:
        state, outcome = report.outcomes.get(expect.run, ("not started", None))
        declared = expect.outcome if expect.state == "ended" else "cancelled"
        got = outcome if state == "ended" else state
        mark = (
            "ok"
            if (state, outcome) == (expect.state, expect.outcome if expect.state == "ended" else None)
            else "NOT AS DECLARED"
        )
        yield f"{expect.run}: {got} (declared {declared}) {mark}"
    yield from report.failures
    minutes = int(report.seconds // 60)
    verdict = "played to its end with the outcomes it declares" if report.ok else "did NOT end as declared"
    yield f"story {story.name}: {len(story.moments)} moments in {minutes} demo minutes: {verdict}"
