"""Scripted stories: a named sequence of moments keyed to the demo clock and to events, so a talk runs
the same every time (`apc demo --story NAME`), and proves it without a console (`--headless`).

A story is a TOML file in `demo/stories/`. Its moments start runs (a stage moment from the
stage menu, or a plain run with its own cues) and act as the story's user acts: approve, reject, return
an escalation, complete a held submission, cancel a run. A moment happens `at` a time on the demo
clock (since the story began), `after` another moment is done, and, for an act, once the work item it
acts on is open: the events it is keyed to. In the console the acts are the presenter's, each cued on
screen when it is due; headless, the story performs them itself, as its user. The story ends when every
moment is done and every run it `expect`s has ended, with the outcomes it declares.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from console.client.wire import RunMode
from demo.actors.director import FATES, Cue
from demo.stories.stage import BY_NAME
from demo.world.values import JsonObject
from engine.document import durations

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
    inputs: JsonObject = field(default_factory=dict)
    cues: dict[str, Cue] = field(default_factory=dict)
    leave: tuple[str, ...] = ()
    mode: RunMode = "live"


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
    folder = files("demo.stories")
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
