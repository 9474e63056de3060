"""SVG snapshots of the main views at 80x24 and 160x48 (the queue, the runs list, the decision forms
and the timeline at 220x60 too), on a fixed clock with fixed ids.

Update them after a deliberate change with `pytest tests/console --snapshot-update`, then look at the
report: a snapshot is only as good as the eye that accepted it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from console.app import ApcApp
from console.live.session import Session
from console.settings.config import ConsoleConfig
from console.settings.themes import load_themes
from engine.clock import ManualClock
from engine.evaluator import Choice, YesNo
from tests.console.console_support import (
    CHOICE_ASK,
    YES_NO_ASK,
    Agent,
    Judge,
    fixed_ids,
    make_client,
    open_engine,
    settle,
)

SIZES = [(80, 24), (160, 48)]
DECIDE_SIZES = [(80, 24), (160, 48), (220, 60)]


async def vetted(agent: Agent) -> None:
    """A vetting run whose check_vendor submission the model was unsure about: held for a person."""
    run_id = await agent.start("vetting", {"vendorName": "Cobalt"})
    token = (await agent.call("claim", runId=run_id, stepId="check_vendor"))["token"]
    file_id = await agent.upload("report.txt", b"no hits\n")
    await agent.call(
        "submit",
        token=token,
        output={"cleared": True, "summary": "Both lists checked."},
        evidence=[{"kind": "file", "ref": file_id}],
        summary="Searched OFAC and EU by legal name.",
        next="done",
        reason="Vendor is cleared.",
    )


def scenario_app(root: Path, *, unsure_check: bool = False) -> ApcApp:
    """Four runs three days old: an approval with a report, an escalation, a task form, a parallel review.

    Run, work item and file ids come from counters, so the pictures do not change between runs.
    """

    async def opener() -> Session:
        clock = ManualClock()
        judge = Judge({YES_NO_ASK: YesNo(0.7), CHOICE_ASK: Choice("states", 0.95)}) if unsure_check else None
        engine = await open_engine(root, clock, ids=fixed_ids(), evaluator=judge)
        agent = Agent(engine)
        if unsure_check:
            await vetted(agent)
        await agent.screen(await agent.start("screening", {"vendorName": "Acme", "amount": 48000}))
        await agent.escalate(
            await agent.start("screening", {"vendorName": "Bolt"}), "The EU list portal is down."
        )
        await agent.start("intake", {"ticket": "T-1"})
        await agent.start("review-pair", {"contract": "C-7"}, mode="test")
        clock.advance(days=3)
        return Session(make_client(engine), "embedded · snapshot", clock=clock, close=engine.close)

    app = ApcApp(opener, live=False, cursor_blink=False, config=ConsoleConfig(), themes=load_themes())
    app.animation_level = "none"
    return app


def before(*steps: Callable[[ApcApp], Any]) -> Callable[[Any], Any]:
    async def run_before(pilot: Any) -> None:
        await pilot.app.ready.wait()
        for step in steps:
            result = step(pilot.app)
            if result is not None:
                await result
            await settle(pilot)

    return run_before


def open_first_run(app: ApcApp) -> None:
    app.open_run("r_0001")


def tab(name: str) -> Callable[[ApcApp], None]:
    def show(app: ApcApp) -> None:
        app.screen.query_one("#run-tabs", TabbedContent).active = name

    return show


@pytest.mark.parametrize("size", DECIDE_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_work_queue(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=before())


async def show_runs(pilot: Any) -> None:
    """`2` once the main screen has settled (its first focus would otherwise pull the Work tab back)."""
    await pilot.app.ready.wait()
    await settle(pilot)
    await pilot.press("2")
    await settle(pilot)


@pytest.mark.parametrize("size", DECIDE_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_runs_list(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=show_runs)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_detail(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=before(open_first_run))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_map(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(
        scenario_app(tmp_path), terminal_size=size, run_before=before(open_first_run, tab("run-map"))
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_evidence(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    steps = before(open_first_run, tab("run-evidence"))
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=steps)


def open_task_form(app: ApcApp) -> None:
    table = app.main.work.table
    key = next(k for k in table.keys if app.main.work.entries[k]["workItem"]["stepId"] == "fill_form")
    table.move_cursor(row=table.keys.index(key))
    app.main.work.action_decide()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_decide_form(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=before(open_task_form))


def open_item(
    step: str, process: str = "screening", *, escalated: bool | None = None
) -> Callable[[ApcApp], None]:
    """Open the decision form of the first queue item of `process` at `step` (escalated or not, when
    it matters)."""

    def open_form(app: ApcApp) -> None:
        work = app.main.work
        key = next(
            k
            for k in work.table.keys
            if work.entries[k]["workItem"]["stepId"] == step
            and work.entries[k]["process"] == process
            and (escalated is None or bool(work.entries[k]["workItem"]["escalation"]) == escalated)
        )
        work.table.move_cursor(row=work.table.keys.index(key))
        work.action_decide()

    return open_form


@pytest.mark.parametrize("size", DECIDE_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_decide_split_escalation(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    steps = before(open_item("check_vendor", escalated=True))
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=steps)


@pytest.mark.parametrize("size", DECIDE_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_decide_split_approval(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=before(open_item("approve")))


@pytest.mark.parametrize("size", DECIDE_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_decide_split_unsure_check(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = scenario_app(tmp_path, unsure_check=True)
    steps = before(open_item("check_vendor", "vetting"))
    assert snap_compare(app, terminal_size=size, run_before=steps)


@pytest.mark.parametrize("size", [*SIZES, (220, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_timeline(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    steps = before(open_first_run, tab("run-timeline"))
    assert snap_compare(scenario_app(tmp_path), terminal_size=size, run_before=steps)
