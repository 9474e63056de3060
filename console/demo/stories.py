"""Scripted stories: a named sequence of moments keyed to the demo clock and to events, so a talk runs
the same every time (`apc demo --story NAME`), and proves it without a console (`--headless`).

A story is a TOML file in `console/demo/stories/`. Its moments start runs (a stage moment from the
stage menu, or a plain run with its own cues) and act as the story's user acts: approve, reject, return
an escalation, complete a held submission, cancel a run. A moment happens `at` a time on the demo
clock (since the story began), `after` another moment is done, and, for an act, once the work item it
acts on is open: the events it is keyed to. In the console the acts are the presenter's, each cued on
screen when it is due; headless, the story performs them itself, as its user. The story ends when every
moment is done and every run it `expect`s has ended, with the outcomes it declares.
"""

from __future__ import annotations

import tomllib
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from console.demo.director import FATES, Cue, Cued
from console.demo.scene import Scene, run_seed
from console.demo.stage import BY_NAME, open_items, step_state
from console.demo.work import draft
from engine.document import durations
from engine.identity import Identity

Act = Literal["approve", "reject", "return", "complete", "cancel"]
ACTS: tuple[Act, ...] = ("approve", "reject", "return", "complete", "cancel")
USERS = ("operator", "approver", "on-call")
STORY_KEYS = frozenset(
    {"title", "user", "description", "seed", "speed", "limit", "background", "moment", "expect"}
)
MOMENT_KEYS = frozenset({"name", "at", "after", "stage", "start", "act", "on", "step", "note", "reason"})
START_KEYS = frozenset({"process", "inputs", "cues", "leave", "mode"})
CUE_KEYS = frozenset({"fate", "pin", "decision", "late"})
EXPECT_KEYS = frozenset({"run", "outcome", "state"})
DEFAULT_LIMIT = "6h"


class StoryError(ValueError):
    """A story file that cannot be played; the message names the file and the place."""


class UnknownStory(StoryError):
    """No story of that name: a usage error."""


@dataclass(frozen=True)
class Start:
    process: str
    inputs: dict[str, Any] = field(default_factory=dict)
    cues: dict[str, Cue] = field(default_factory=dict)
    leave: tuple[str, ...] = ()
    mode: str = "live"


@dataclass(frozen=True)
class StoryMoment:
    name: str
    at: int | None = None
    """Demo seconds since the story began."""
    after: str | None = None
    stage: str | None = None
    start: Start | None = None
    act: Act | None = None
    on: str | None = None
    """The moment whose run an act acts on."""
    step: str | None = None
    """The step whose work item an act decides (or that a cancel waits for)."""
    note: str | None = None
    reason: str | None = None

    @property
    def starts_run(self) -> bool:
        return self.stage is not None or self.start is not None

    def describe(self) -> str:
        if self.stage is not None:
            return f"stage {self.stage}: {BY_NAME[self.stage].title}"
        if self.start is not None:
            return f"start {self.start.process}"
        where = f"{self.on}" + (f" · {self.step}" if self.step else "")
        return f"{self.act} {where}"


@dataclass(frozen=True)
class Expect:
    run: str
    outcome: str | None = None
    state: str = "ended"


@dataclass(frozen=True)
class Story:
    name: str
    title: str
    user: str
    description: str
    seed: int
    speed: float
    limit: int
    """Demo seconds the story may take before a headless play gives up."""
    background: bool
    """Whether the demo's stream of other runs goes on beside the story (the console only)."""
    moments: tuple[StoryMoment, ...]
    expects: tuple[Expect, ...]

    @property
    def agents(self) -> int:
        """Demo agents the story needs."""
        return max([1, *(BY_NAME[m.stage].needs_agents for m in self.moments if m.stage)])


def stories_folder() -> Path:
    folder = files("console.demo").joinpath("stories")
    if not isinstance(folder, Path):
        raise RuntimeError(f"apc must be installed as files on disk, not in an archive: {folder}")
    return folder


def story_names(folder: Path | None = None) -> list[str]:
    return sorted(p.stem for p in (folder or stories_folder()).glob("*.toml"))


def load_story(name: str, folder: Path | None = None) -> Story:
    folder = folder or stories_folder()
    path = folder / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(story_names(folder)) or "none"
        raise UnknownStory(f"no story named {name!r} (known: {known})")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise StoryError(f"{path}: not TOML: {exc}") from None
    try:
        return parse_story(name, doc)
    except StoryError as exc:
        raise StoryError(f"{path}: {exc}") from None


def parse_story(name: str, doc: Mapping[str, Any]) -> Story:
    _keys(doc, STORY_KEYS, "story")
    for key in ("title", "description"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            raise StoryError(f"{key}: expected a line of text")
    user = doc.get("user")
    if user not in USERS:
        raise StoryError(f"user: expected one of {', '.join(USERS)}")
    seed = doc.get("seed", 1)
    speed = doc.get("speed", 90)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise StoryError("seed: expected a whole number")
    if not isinstance(speed, int | float) or isinstance(speed, bool) or speed <= 0:
        raise StoryError("speed: expected a positive number")
    moments = tuple(_moment(m, i) for i, m in enumerate(_tables(doc.get("moment"), "moment")))
    expects = tuple(_expect(e, i) for i, e in enumerate(_tables(doc.get("expect"), "expect", empty=True)))
    _cross_check(moments, expects)
    return Story(
        name,
        doc["title"].strip(),
        user,
        " ".join(doc["description"].split()),
        seed,
        float(speed),
        _duration(doc.get("limit", DEFAULT_LIMIT), "limit"),
        bool(doc.get("background", False)),
        moments,
        expects,
    )


def _keys(table: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise StoryError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")


def _tables(value: Any, where: str, *, empty: bool = False) -> list[dict[str, Any]]:
    if value is None and empty:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value) or not (value or empty):
        raise StoryError(f"{where}: expected an array of tables ([[{where}]])")
    return value


def _duration(value: Any, where: str) -> int:
    seconds = durations.parse_duration(value) if isinstance(value, str) else None
    if seconds is None and value not in ("0s", "0m"):
        raise StoryError(f"{where}: expected a duration such as 90s, 5m or 2h")
    return seconds or 0


def _text(table: Mapping[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise StoryError(f"{where}.{key}: expected text")
    return value


def _moment(table: dict[str, Any], i: int) -> StoryMoment:
    where = f"moment[{i}]"
    _keys(table, MOMENT_KEYS, where)
    name = _text(table, "name", where)
    if name is None:
        raise StoryError(f"{where}.name: every moment has a name")
    where = f"moment {name!r}"
    kinds = [k for k in ("stage", "start", "act") if k in table]
    if len(kinds) != 1:
        raise StoryError(f"{where}: give exactly one of stage, start or act")
    stage = _text(table, "stage", where)
    if stage is not None and stage not in BY_NAME:
        raise StoryError(f"{where}.stage: no stage moment {stage!r} (known: {', '.join(BY_NAME)})")
    act = table.get("act")
    if act is not None and act not in ACTS:
        raise StoryError(f"{where}.act: expected one of {', '.join(ACTS)}")
    if act is not None and table.get("on") is None:
        raise StoryError(f"{where}.on: an act names the moment whose run it acts on")
    if act in ("reject", "return") and table.get("note") is None:
        raise StoryError(f"{where}.note: a {act} needs its note")
    if act == "cancel" and table.get("reason") is None:
        raise StoryError(f"{where}.reason: a cancel needs its reason")
    if act in ("approve", "reject", "return", "complete") and table.get("step") is None:
        raise StoryError(f"{where}.step: an {act} names the step whose work item it decides")
    return StoryMoment(
        name=name,
        at=_duration(table["at"], f"{where}.at") if "at" in table else None,
        after=_text(table, "after", where),
        stage=stage,
        start=_start(table["start"], f"{where}.start") if "start" in table else None,
        act=act,
        on=_text(table, "on", where),
        step=_text(table, "step", where),
        note=_text(table, "note", where),
        reason=_text(table, "reason", where),
    )


def _start(table: Any, where: str) -> Start:
    if not isinstance(table, dict):
        raise StoryError(f"{where}: expected a table")
    _keys(table, START_KEYS, where)
    process = _text(table, "process", where)
    if process is None:
        raise StoryError(f"{where}.process: expected the name of a process")
    cues = table.get("cues", {})
    if not isinstance(cues, dict):
        raise StoryError(f"{where}.cues: expected a table of steps")
    leave = table.get("leave", [])
    if not isinstance(leave, list) or not all(isinstance(s, str) for s in leave):
        raise StoryError(f"{where}.leave: expected a list of step ids")
    inputs = table.get("inputs", {})
    if not isinstance(inputs, dict):
        raise StoryError(f"{where}.inputs: expected a table")
    mode = table.get("mode", "live")
    if mode not in ("live", "test"):
        raise StoryError(f"{where}.mode: expected live or test")
    return Start(
        process, inputs, {s: _cue(c, f"{where}.cues.{s}") for s, c in cues.items()}, tuple(leave), mode
    )


def _cue(table: Any, where: str) -> Cue:
    if not isinstance(table, dict):
        raise StoryError(f"{where}: expected a table")
    _keys(table, CUE_KEYS, where)
    fate = table.get("fate", "normal")
    if fate not in FATES:
        raise StoryError(f"{where}.fate: expected one of {', '.join(FATES)}")
    decision = table.get("decision")
    if decision not in (None, "approved", "rejected", "completed", "returned"):
        raise StoryError(f"{where}.decision: expected approved, rejected, completed or returned")
    pin = table.get("pin", {})
    if not isinstance(pin, dict):
        raise StoryError(f"{where}.pin: expected a table of output values")
    return Cue(fate=fate, pin=pin, decision=decision, late=bool(table.get("late", False)))


def _expect(table: dict[str, Any], i: int) -> Expect:
    where = f"expect[{i}]"
    _keys(table, EXPECT_KEYS, where)
    run = _text(table, "run", where)
    if run is None:
        raise StoryError(f"{where}.run: expected the name of a moment that starts a run")
    state = table.get("state", "ended")
    if state not in ("ended", "cancelled"):
        raise StoryError(f"{where}.state: expected ended or cancelled")
    if state == "ended" and _text(table, "outcome", where) is None:
        raise StoryError(f"{where}.outcome: a run expected to end declares its outcome")
    return Expect(run, table.get("outcome"), state)


def _cross_check(moments: tuple[StoryMoment, ...], expects: tuple[Expect, ...]) -> None:
    seen: dict[str, StoryMoment] = {}
    for m in moments:
        if m.name in seen:
            raise StoryError(f"moment {m.name!r}: the name is used twice")
        if m.after is not None and m.after not in seen:
            raise StoryError(f"moment {m.name!r}.after: no earlier moment {m.after!r}")
        if m.on is not None and not (m.on in seen and seen[m.on].starts_run):
            raise StoryError(f"moment {m.name!r}.on: no earlier moment {m.on!r} that starts a run")
        if m.at is None and m.after is None and not m.starts_run and m.act is None:
            raise StoryError(f"moment {m.name!r}: say when, with at or after")
        seen[m.name] = m
    for e in expects:
        if e.run not in seen or not seen[e.run].starts_run:
            raise StoryError(f"expect {e.run!r}: no moment {e.run!r} that starts a run")


# --- playing -----------------------------------------------------------------------------------------


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

    def __init__(self, story: Story, system: Any, *, perform: bool, began: datetime) -> None:
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

    def _target(self, view: Mapping[str, Any], m: StoryMoment) -> str | None:
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

    async def _await_presenter(self, p: Progress, view: Mapping[str, Any], run_id: str) -> None:
        m = p.moment
        if not p.cued:
            p.cued = True
            text = self._cue_text(m, run_id)
            self.cues.append(text)
            self._say(f"{m.name}: your turn: {text}")
        if m.act == "cancel":
            done = view["run"]["state"] == "cancelled"
        else:
            done = all(w["id"] != p.item_id for w in view.get("workItems") or ())
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

    def _actor(self, view: Mapping[str, Any], p: Progress) -> Identity:
        """Who performs the act: the operator, or for an approver a member of the item's group."""
        org = self.system.org
        if self.story.user != "approver" or p.moment.act == "cancel":
            return org.operator
        item = next((w for w in view.get("workItems") or () if w["id"] == p.item_id), None)
        assigned = (item or {}).get("assignedTo") or {}
        if "person" in assigned:
            return Identity("person", assigned["person"])
        members = org.org.groups.get(assigned.get("group"), [])
        person = next((who for who in members if who != org.operator_email), org.operator_email)
        return Identity("person", person, operator=person == org.operator_email)

    async def _perform(self, p: Progress, view: Mapping[str, Any], run_id: str) -> str:
        m = p.moment
        who = self._actor(view, p)
        engine = self.system.engine
        if m.act == "cancel":
            args: dict[str, Any] = {"runId": run_id, "reason": m.reason, "requestId": str(uuid.uuid4())}
            result = await engine.call(who, "cancel", args)
            return "ok" if result["ok"] else result["error"]["code"]
        item = next(w for w in view["workItems"] if w["id"] == p.item_id)
        decision = {
            "approve": "approved",
            "reject": "rejected",
            "return": "returned",
            "complete": "completed",
        }[m.act or "approve"]
        prepared = {k: v for k, v in item["decide"]["arguments"].items() if k != "requestId"}
        extra: dict[str, Any] = {"note": m.note} if m.note and decision != "completed" else {}
        if decision == "completed" and "candidate" not in (item.get("escalation") or {}):
            extra = self._completion(view, item)
        args = {**prepared, "decision": decision, **extra, "requestId": str(uuid.uuid4())}
        result = await engine.call(who, "decide", args)
        return "ok" if result["ok"] else result["error"]["code"]

    def _completion(self, view: Mapping[str, Any], item: Mapping[str, Any]) -> dict[str, Any]:
        """The output a person completes an escalated or task item with, drafted from the run."""
        system = self.system
        process = view["run"]["process"]
        data = view["data"]
        scene = Scene(
            process,
            run_seed(self.story.seed, process, data.get("inputs") or {}),
            system.clock.now(),
            data,
            view.get("body") or "",
            system.org.person_pool,
            system.relations,
        )
        work = draft(dict(item), system.people.rng, scene, step_id=item["stepId"])
        extra: dict[str, Any] = {"output": work.output, "summary": f"Completed by the {self.story.user}."}
        if work.choice is not None:
            extra["next"], extra["reason"] = work.choice.to, work.choice.reason
        if work.evidence:
            extra["evidence"] = [
                {"kind": "link", "ref": f"https://records.example.com/{process}/{item['stepId']}"}
            ]
        return extra

    async def _view(self, run_id: str | None) -> dict[str, Any] | None:
        if run_id is None:
            return None
        result = await self.system.engine.call(self.system.operator, "get_run", {"runId": run_id})
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
