"""The check profile in the console: verdicts in the run detail, unsure checks flagged in the queue, and
the held candidate completed as it is or edited, against a real engine with a fake evaluator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input, Select, TextArea

from console.client.local import LocalClient
from console.client.wire import Limits, QuestionKind, RunView, VerdictQuestion
from console.modals.decide import DecideDialog
from console.screens.run import RunScreen
from console.views.format import short_id
from console.views.verdict_bars import bar_for, question_bar
from engine.clock import ManualClock
from engine.core import Engine
from engine.document.model import CheckQuestion
from engine.evaluator import Answer, Choice, YesNo
from tests.console.console_support import (
    CHOICE_ASK,
    YES_NO_ASK,
    Agent,
    Judge,
    cells,
    click,
    make_app,
    make_client,
    open_engine,
    press,
    run_view,
    settle,
    shown,
)

UNSURE: dict[str, Answer] = {YES_NO_ASK: YesNo(0.7), CHOICE_ASK: Choice("states", 0.95)}
PASSING: dict[str, Answer] = {YES_NO_ASK: YesNo(0.97), CHOICE_ASK: Choice("states", 0.93)}


@pytest.fixture
def judge() -> Judge:
    return Judge(dict(PASSING))


@pytest.fixture
async def checked(tmp_path: Path, clock: ManualClock, judge: Judge) -> AsyncIterator[Engine]:
    eng = await open_engine(tmp_path, clock, evaluator=judge)
    try:
        yield eng
    finally:
        await eng.close()


@pytest.fixture
def ops(checked: Engine) -> LocalClient:
    return make_client(checked)


@pytest.fixture
def screener(checked: Engine) -> Agent:
    return Agent(checked)


async def vet(agent: Agent, vendor: str = "Acme") -> tuple[str, str]:
    """Start a vetting run and submit check_vendor with a report; the run id and the report's file id."""
    run_id = await agent.start("vetting", {"vendorName": vendor})
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
    return run_id, file_id


def record(view: RunView) -> dict[str, object]:
    """check_vendor's record, its evidence without the signed URL and hash (they vary per read)."""
    step = view["data"]["steps"]["check_vendor"]
    evidence = [{"kind": e["kind"], "ref": e["ref"]} for e in step.get("evidence", ())]
    return {**step, "evidence": evidence}


UNSURE_VERDICT = {
    "verdict": "unsure",
    "advisory": False,
    "model": "judge-1",
    "questions": [
        {"ask": YES_NO_ASK, "kind": "yes_no", "answer": 0.7, "result": "unsure"},
        {"ask": CHOICE_ASK, "kind": "choice", "answer": "states", "confidence": 0.95, "result": "pass"},
    ],
    "at": "2026-10-06T09:00:00Z",
}


async def test_run_detail_shows_the_verdict_with_each_question_and_its_threshold(
    ops: LocalClient, screener: Agent, clock: ManualClock
) -> None:
    run_id, _ = await vet(screener)
    app = make_app(ops, clock)
    async with app.run_test(size=(200, 48)) as pilot:
        await app.ready.wait()
        app.open_run(run_id)
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)
        app.screen.table.move_cursor(row=0)
        await settle(pilot)
        lines = shown(app, "#step-detail").splitlines()
        assert lines[0] == "check_vendor · agent · done"
        assert lines[-3:] == [
            "  check: pass · blocking · model judge-1 · 2026-10-06 09:00",
            f"    pass · yes_no: {YES_NO_ASK} → 0.97 · needs pass ≥ 0.9, fail < 0.5",
            f"    pass · choice: {CHOICE_ASK} → states (confidence 0.93) · needs pass: states; confidence ≥ 0.8",
        ]


async def test_the_queue_flags_an_unsure_check_apart_from_an_ordinary_escalation(
    ops: LocalClient, screener: Agent, judge: Judge, clock: ManualClock
) -> None:
    judge.answers = dict(UNSURE)
    checked_run, _ = await vet(screener)
    asked_run = await screener.start("screening", {"vendorName": "Bolt"})
    await screener.escalate(asked_run, "The EU list portal is down.")
    app = make_app(ops, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        table = app.main.work.table
        rows = {}
        for key in table.keys:
            flags, kind, process, run, *_ = cells(table, key)
            assert run.plain == short_id(app.main.work.entries[key]["runId"], app.main.work.run_chars)
            rows[app.main.work.entries[key]["runId"]] = (flags.plain, kind.plain, process.plain)
        assert rows == {
            checked_run: ("? ", "check", "vetting"),
            asked_run: ("⚑ ", "escalation", "screening"),
        }
        table.move_cursor(row=table.keys.index(next(k for k in table.keys if k.startswith(checked_run))))
        await settle(pilot)
        assert shown(app, "#work-detail").splitlines()[0:3] == [
            "escalated by an unsure check: the submission is held for you to decide",
            f"escalated by server at 2026-10-06 09:00: check: {YES_NO_ASK} → no (0.7)",
            "  check: unsure · blocking · model judge-1 · 2026-10-06 09:00",
        ]
        assert cells(table, table.current_key or "")[-1].plain == f"check: {YES_NO_ASK} → no (0.7)"


async def test_complete_an_unsure_check_with_the_candidate_as_it_is(
    ops: LocalClient, screener: Agent, judge: Judge, clock: ManualClock
) -> None:
    judge.answers = dict(UNSURE)
    run_id, file_id = await vet(screener)
    app = make_app(ops, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter")
        form = app.screen
        assert isinstance(form, DecideDialog)
        await settle(pilot)
        item = shown(app, "#context")
        assert "held candidate:" in item
        assert f"    unsure · yes_no: {YES_NO_ASK} → 0.7 · needs pass ≥ 0.9, fail < 0.5" in item
        await click(pilot, "#decision-completed")
        assert form.query_one("#use-candidate", Checkbox).value is True
        assert form.arguments()[0] == {**form.item["decide"]["arguments"], "decision": "completed"}
        await press(pilot, "ctrl+s", "y")
        assert app.toasts[0] == f"completed check_vendor: {run_id[:6]}… now ended: onboarded"
    view = await run_view(ops, run_id)
    assert record(view) == {
        "output": {"cleared": True, "summary": "Both lists checked."},
        "evidence": [{"kind": "file", "ref": file_id}],
        "summary": "Searched OFAC and EU by legal name.",
        "next": "done",
        "reason": "Vendor is cleared.",
        "by": "ops@example.com",
        "at": "2026-10-06T09:00:00Z",
        "check": UNSURE_VERDICT,
        "history": [],
    }


async def test_complete_an_unsure_check_with_an_edited_candidate(
    ops: LocalClient, screener: Agent, judge: Judge, clock: ManualClock
) -> None:
    judge.answers = dict(UNSURE)
    run_id, file_id = await vet(screener)
    app = make_app(ops, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter")
        form = app.screen
        assert isinstance(form, DecideDialog)
        await click(pilot, "#decision-completed")
        await click(pilot, "#use-candidate")
        assert form.query_one("#field-summary", Input).value == "Both lists checked."
        assert form.query_one("#route", Select).value == "done"
        assert form.query_one("#reason", Input).value == "Vendor is cleared."
        assert form.query_one("#summary", TextArea).text == "Searched OFAC and EU by legal name."
        form.query_one("#field-summary", Input).value = "Both lists checked; the EU hit is another company."
        form.query_one("#summary", TextArea).text = "Read the EU hit: a namesake."
        await press(pilot, "ctrl+s", "y")
        assert app.toasts[0] == f"completed check_vendor: {run_id[:6]}… now ended: onboarded"
    view = await run_view(ops, run_id)
    assert record(view) == {
        "output": {"cleared": True, "summary": "Both lists checked; the EU hit is another company."},
        "evidence": [{"kind": "file", "ref": file_id}],
        "summary": "Read the EU hit: a namesake.",
        "next": "done",
        "reason": "Vendor is cleared.",
        "by": "ops@example.com",
        "at": "2026-10-06T09:00:00Z",
        "check": UNSURE_VERDICT,
        "history": [],
    }


def test_bars_come_from_the_document_with_server_defaults_filling_gaps_else_from_limits() -> None:
    limits: Limits = {
        "runDataBytes": 1_048_576,
        "checkPass": 0.9,
        "checkFail": None,
        "checkConfidence": 0.8,
        "checkStateBytes": 65_536,
    }
    rubric = CheckQuestion("How complete?", "rubric", levels=("none", "one", "both"), pass_level=2)
    choice = CheckQuestion(
        "Summary?", "choice", pass_choices=("states",), unsure_choices=("unclear",), confidence=0.7
    )
    yes_no = CheckQuestion("Matches?", "yes_no")
    assert [question_bar(q, limits) for q in (rubric, choice, yes_no)] == [
        "pass ≥ level 2; confidence ≥ 0.8",
        "pass: states; unsure: unclear; confidence ≥ 0.7",
        "pass ≥ 0.9, fail below that",
    ]
    bars = {"Matches?": "pass ≥ 0.95, fail < 0.5"}
    assert bar_for(asked("Matches?", "yes_no"), bars, limits) == "pass ≥ 0.95, fail < 0.5"
    assert bar_for(asked("Other?", "yes_no"), bars, {**limits, "checkFail": 0.4}) == (
        "server default pass ≥ 0.9, fail < 0.4"
    )
    assert bar_for(asked("Other?", "rubric"), {}, limits) == "server default confidence ≥ 0.8"
    assert bar_for(asked("Other?", "yes_no"), {}, None) == "server default pass ≥ —, fail below that"


def asked(ask: str, kind: QuestionKind) -> VerdictQuestion:
    return {"ask": ask, "kind": kind, "answer": None, "result": "unsure"}
