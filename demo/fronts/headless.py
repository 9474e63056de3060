"""`apc demo --headless`: the same story without the console, with progress lines, a summary table of
outcomes per process, and an exit status that says whether every run ended as its process allows.

It is the demo's own end-to-end check: agents over MCP, people, events, timers and rework all have to
work together for twenty runs of ten processes to reach their outcomes within the time limit.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TextIO

from console.client.wire import RunView
from demo.actors.calls import as_person
from demo.actors.control import AgentState
from demo.stories.play import StoryPlayer, StoryReport, summary_lines
from demo.stories.story import Story
from demo.stories.stream import allowed_outcomes
from demo.system import DemoSettings, DemoSystem
from engine.clock import ManualClock

POLL_SECONDS = 0.2
STORY_START = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)
"""Where a headless story's clock starts: the same every time, so the story plays the same."""
TURN_SECONDS = 30.0
"""Demo seconds between two turns of a headless story (agents, people, events, timers)."""
STORY_LEASE_SECONDS = 600


@dataclass
class Ended:
    run_id: str
    process: str
    mode: str
    state: str
    outcome: str | None
    allowed: bool


@dataclass
class HeadlessReport:
    runs: int
    ended: list[Ended] = field(default_factory=list)
    views: dict[str, RunView] = field(default_factory=dict)
    """The last `get_run` result (the `data` of the envelope) of every run, by run id."""
    unfinished: list[str] = field(default_factory=list)
    refused_processes: dict[str, list[str]] = field(default_factory=dict)
    refused_starts: list[tuple[str, list[str]]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    agents: list[AgentState] = field(default_factory=list)
    """What each demo agent did, as its state stood at the end."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            len(self.ended) == self.runs
            and all(e.allowed for e in self.ended)
            and not self.unfinished
            and not self.refused_starts
            and not self.failures
        )

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


async def run_headless(settings: DemoSettings, out: TextIO, *, time_limit: float = 600.0) -> HeadlessReport:
    """Run the story until `settings.runs` runs have ended or `time_limit` real seconds have passed."""
    wanted = settings.runs or 0
    report = HeadlessReport(runs=wanted)
    began = time.monotonic()
    system = await DemoSystem.open(settings)
    try:
        report.refused_processes = dict(system.refused)
        out.write(
            f"apc demo: data in {system.data_dir}, endpoint {system.server.url}, speed {settings.speed:g}x\n"
        )
        out.write(f"published {len(system.processes)} processes: {', '.join(sorted(system.processes))}\n")
        if system.engine.evaluator is not None:
            out.write(f"checks answered by {system.engine.evaluator.model}\n")
        for name, issues in sorted(system.refused.items()):
            out.write(f"not published {name}: {'; '.join(issues)}\n")
        for problem in system.relation_problems:
            out.write(f"demo relations: {problem}\n")
        system.start()
        seen: set[str] = set()
        while time.monotonic() - began < time_limit:
            for started in list(system.starter.started):
                if started.run_id in seen:
                    continue
                view = await _run_view(system, started.run_id)
                run = view["run"]
                if run["state"] not in ("ended", "cancelled"):
                    continue
                seen.add(started.run_id)
                report.views[started.run_id] = view
                allowed = run["outcome"] in allowed_outcomes(system.processes[started.process])
                report.ended.append(
                    Ended(
                        started.run_id, started.process, started.mode, run["state"], run["outcome"], allowed
                    )
                )
                out.write(
                    _progress_line(time.monotonic() - began, len(report.ended), wanted, report.ended[-1])
                )
            if len(report.ended) >= wanted or system.failures or not system.processes:
                break
            await asyncio.sleep(POLL_SECONDS)
        report.unfinished = [s.run_id for s in system.starter.started if s.run_id not in seen]
        for run_id in report.unfinished:
            report.views[run_id] = await _run_view(system, run_id)
        report.refused_starts = list(system.starter.refused)
        report.failures = list(system.failures)
        report.agents = system.control.agents
        report.seconds = time.monotonic() - began
        out.write(summary_table(report, system))
    finally:
        await system.close()
    return report


async def _run_view(system: DemoSystem, run_id: str) -> RunView:
    """The run as the operator sees it; a refusal here is the demo's own fault, so it stops the run."""
    answer = await as_person(system.engine, system.operator).get_run(run_id)
    if not answer["ok"]:
        raise RuntimeError(f"get_run {run_id}: {answer['error']['message']}")
    return answer["data"]


def _progress_line(elapsed: float, count: int, wanted: int, ended: Ended) -> str:
    mark = "" if ended.allowed else "  << not an outcome of this process"
    mode = " (test)" if ended.mode == "test" else ""
    return f"[{elapsed:6.1f}s] {count}/{wanted} {ended.process} {ended.run_id}{mode}: {ended.outcome}{mark}\n"


def recorded_checks(views: dict[str, RunView]) -> Counter[str]:
    """Verdicts the run data records (`steps.<id>.check`, also in history), `advisory` ones apart."""
    found: Counter[str] = Counter()
    for view in views.values():
        for record in view["data"]["steps"].values():
            for entry in [record, *record["history"]]:
                if (check := entry.get("check")) is not None:
                    found[("advisory " if check["advisory"] else "") + check["verdict"]] += 1
    return found


def check_line(report: HeadlessReport) -> str:
    """What the checks did: verdicts recorded, refusals the agents fixed, and holds for a person."""
    recorded = recorded_checks(report.views)
    shown = ", ".join(f"{name} {n}" for name, n in sorted(recorded.items())) or "none"
    refused = sum(a.check_refused for a in report.agents)
    fixed = sum(a.check_fixed for a in report.agents)
    held = sum(a.held for a in report.agents)
    return f"recorded {shown}; refused {refused} (fixed by the agent {fixed}); held for a person {held}"


def summary_table(report: HeadlessReport, system: DemoSystem) -> str:
    by_process: dict[str, list[Ended]] = {}
    for ended in report.ended:
        by_process.setdefault(ended.process, []).append(ended)
    width = max([len("process"), *(len(p) for p in by_process)])
    lines = ["", f"{'process':<{width}}  runs  test  outcomes"]
    for process in sorted(by_process):
        runs = by_process[process]
        outcomes = Counter(e.outcome or e.state for e in runs)
        shown = ", ".join(f"{name} {n}" for name, n in sorted(outcomes.items()))
        bad = [e.outcome for e in runs if not e.allowed]
        tests = sum(1 for e in runs if e.mode == "test")
        lines.append(
            f"{process:<{width}}  {len(runs):>4}  {tests:>4}  {shown}"
            + (f"  (unexpected: {bad})" if bad else "")
        )
    agents = system.control.agents
    lines.append("")
    lines.append(
        "agents: "
        + "; ".join(
            f"{a.name} claimed {a.claimed}, submitted {a.submitted}, escalated {a.escalated}, "
            f"refused {a.refused}, lapsed {a.lapsed}"
            for a in agents
        )
    )
    lines.append(f"checks: {check_line(report)}")
    decisions = ", ".join(f"{k} {v}" for k, v in sorted(system.people.decisions.items()))
    lines.append(f"people: {decisions or 'none'}")
    events = ", ".join(f"{k} {v}" for k, v in sorted(system.events.sent.items()))
    lines.append(f"events: {events or 'none'}")
    for run_id in report.unfinished:
        lines.append(f"unfinished: {run_id}")
    for name, issues in report.refused_starts:
        lines.append(f"start refused: {name}: {'; '.join(issues)}")
    for failure in report.failures:
        lines.append(f"failure: {failure}")
    verdict = (
        "every run ended with an outcome of its process"
        if report.ok
        else "NOT every run ended as its process allows"
    )
    lines.append(f"{len(report.ended)}/{report.runs} runs ended in {report.seconds:.1f}s: {verdict}")
    return "\n".join(lines) + "\n"


async def run_story_headless(story: Story, settings: DemoSettings, out: TextIO) -> StoryReport:
    """Play `story` on a ManualClock, turn by turn in this task, until it ends or its time limit passes.

    Nothing waits on wall time: the clock moves `TURN_SECONDS` a turn (and while an agent works), so
    the story takes the same demo minutes, and makes the same calls, every time it is played.
    """
    conducted = replace(
        settings,
        seed=story.seed,
        runs=0,
        agents=max(settings.agents, story.agents),
        lease_seconds=STORY_LEASE_SECONDS,
    )
    system = await DemoSystem.open(conducted, clock=ManualClock(STORY_START))
    try:
        out.write(f"apc demo --story {story.name}: {story.title} (as the {story.user})\n")
        for problem in system.relation_problems:
            out.write(f"demo relations: {problem}\n")
        player = StoryPlayer(story, system, perform=True, began=system.clock.now())
        shown = 0
        while player.elapsed() <= story.limit:
            await player.poll()
            for line in player.log[shown:]:
                out.write(line + "\n")
            shown = len(player.log)
            if await player.finished():
                break
            await system.turn(TURN_SECONDS)
        report = await player.report()
        if player.elapsed() > story.limit:
            report.failures.append(f"the story did not end within {story.limit // 60} demo minutes")
        for line in summary_lines(report):
            out.write(line + "\n")
    finally:
        await system.disconnect_agents()
        await system.close()
    return report
