"""Each question kind and its thresholds through `submit`; advisory checks; what the evaluator is shown."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.evaluator import Answer, CheckConfig, CheckLimits, Choice, EvaluatorError, Level, YesNo
from tests.engine.engine_support import (
    OPS,
    SCREENER,
    call,
    claim,
    err,
    make_org,
    ok,
    publish,
    start,
    step_states,
)
from tests.engine.evaluator.engine_check_support import VERDICT_VALIDATOR, Judge, checked_engine, verdict

pytestmark = pytest.mark.both_stores

ONE_QUESTION = """
---
name: one-question
description: One agent step with a check.
inputs:
  ticket: string
steps:
  - id: work
    agent: Answer the ticket.
    output: {{ note: string }}
{check}
  - id: done
    finish: finished
---

Answer tickets.
"""

SHORT = "    check: The note answers the ticket."
BAND = """
    check:
      - ask: The note answers the ticket.
        pass: 0.8
        fail: 0.4
"""
CHOICE = """
    check:
      - ask: What does the note do?
        one_of:
          answers: Answers the ticket.
          deflects: Sends the customer elsewhere.
          unclear: Cannot tell.
        pass: [answers]
        unsure: [unclear]
"""
RUBRIC = """
    check:
      - ask: How complete is the note?
        levels:
          - Says nothing useful.
          - Answers part of the ticket.
          - Answers all of it.
        pass: 1
        confidence: 0.6
"""
ADVISORY = """
    advisory: true
    check:
      - ask: The note answers the ticket.
      - ask: How complete is the note?
        levels: [Nothing., Part., All.]
        pass: 2
"""

ASKS = {
    SHORT: "The note answers the ticket.",
    BAND: "The note answers the ticket.",
    CHOICE: "What does the note do?",
    RUBRIC: "How complete is the note?",
}


def text(check: str) -> str:
    return ONE_QUESTION.format(check=textwrap.indent(textwrap.dedent(check).strip("\n"), "    "))


async def submit_note(engine: Any, note: str = "Refunded in full.") -> dict[str, Any]:
    view = await start(engine, "one-question", {"ticket": "T-1"})
    claimed = await claim(engine, view["run"]["id"], "work")
    return await call(
        engine, SCREENER, "submit", token=claimed["token"], output={"note": note}, summary="Did it."
    )


@pytest.mark.parametrize(
    ("check", "answer", "row", "outcome"),
    [
        (SHORT, YesNo(0.9), ("yes_no", 0.9, None, "pass"), "pass"),
        (SHORT, YesNo(0.899), ("yes_no", 0.899, None, "fail"), ["check: The note answers the ticket. → no (0.899)"]),
        (BAND, YesNo(0.8), ("yes_no", 0.8, None, "pass"), "pass"),
        (BAND, YesNo(0.4), ("yes_no", 0.4, None, "unsure"), "unsure"),
        (BAND, YesNo(0.39), ("yes_no", 0.39, None, "fail"), ["check: The note answers the ticket. → no (0.39)"]),
        (CHOICE, Choice("answers", 0.8), ("choice", "answers", 0.8, "pass"), "pass"),
        (CHOICE, Choice("answers", 0.79), ("choice", "answers", 0.79, "unsure"), "unsure"),
        (CHOICE, Choice("unclear", 0.99), ("choice", "unclear", 0.99, "unsure"), "unsure"),
        (CHOICE, Choice("deflects", 0.95), ("choice", "deflects", 0.95, "fail"),
         ["check: What does the note do? → deflects (0.95)"]),
        (RUBRIC, Level(1, 0.6), ("rubric", 1, 0.6, "pass"), "pass"),
        (RUBRIC, Level(2, 0.5), ("rubric", 2, 0.5, "unsure"), "unsure"),
        (RUBRIC, Level(0, 0.9), ("rubric", 0, 0.9, "fail"),
         ["check: How complete is the note? → level 0: Says nothing useful. (0.9)"]),
    ],
)  # fmt: skip
async def test_each_question_kind_reaches_its_verdict_through_submit(
    tmp_path: Path, clock: ManualClock, check: str, answer: Answer, row: tuple[Any, ...], outcome: Any
) -> None:
    judge = Judge()
    async with checked_engine(tmp_path, clock, judge) as engine:
        await publish(engine, tmp_path, text(check))
        ask = ASKS[check]
        judge.script = {ask: [answer]}
        reply = await submit_note(engine)
    kind, value, confidence, result = row
    expected = verdict(result, [(ask, kind, value, confidence, result)])
    if isinstance(outcome, list):
        err(reply, "not_accepted", outcome)
        return
    view = ok(reply, "submit")
    if outcome == "pass":
        assert step_states(view)["work"] == "done"
        assert view["data"]["steps"]["work"]["check"] == expected
    else:
        assert step_states(view)["work"] == "waiting"
        assert view["workItems"][0]["escalation"]["check"] == expected
        assert view["data"]["steps"]["work"] == {"check": expected, "history": []}


@pytest.mark.parametrize(
    ("answers", "expected_rows", "kind"),
    [
        ({"The note answers the ticket.": [YesNo(0.2)]},
         [("yes_no", 0.2, None, "fail"), ("rubric", 2, 1.0, "pass")], "fail"),
        ({"How complete is the note?": [Level(2, 0.3)]},
         [("yes_no", 0.95, None, "pass"), ("rubric", 2, 0.3, "unsure")], "unsure"),
        ({"How complete is the note?": [EvaluatorError("down")]},
         [("yes_no", 0.95, None, "pass"), ("rubric", None, None, "unsure")], "error"),
    ],
)  # fmt: skip
async def test_an_advisory_check_records_every_verdict_and_never_blocks(
    tmp_path: Path,
    clock: ManualClock,
    answers: dict[str, list[Any]],
    expected_rows: list[tuple[Any, ...]],
    kind: str,
) -> None:
    judge = Judge(
        script={"The note answers the ticket.": [YesNo(0.95)], "How complete is the note?": [Level(2, 1.0)]}
    )
    judge.script.update(answers)
    async with checked_engine(tmp_path, clock, judge) as engine:
        await publish(engine, tmp_path, text(ADVISORY))
        view = ok(await submit_note(engine), "submit")
    asks = ["The note answers the ticket.", "How complete is the note?"]
    rows = [(ask, *row) for ask, row in zip(asks, expected_rows, strict=True)]
    expected = verdict(kind, [(a, k, v, c, r) for a, k, v, c, r in rows], advisory=True)
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "finished")
    assert view["data"]["steps"]["work"]["check"] == expected
    assert [e.message for e in VERDICT_VALIDATOR.iter_errors(expected)] == []


THREE = """
---
name: three-notes
description: Two notes, then a checked third.
inputs:
  ticket: string
steps:
  - id: one
    agent: Write the first note.
    output: { note: string }
  - id: two
    agent: Write the second note.
    output: { note: string }
  - id: three
    agent: Write the third note.
    output: { note: string }
    check: The third note agrees with the first two.
  - id: done
    finish: finished
---

Notes.
"""


async def test_the_evaluator_sees_run_data_cut_to_check_state_bytes_oldest_step_first(
    tmp_path: Path, clock: ManualClock
) -> None:
    judge = Judge(script={"The third note agrees with the first two.": [YesNo(0.95)]})
    org = make_org()
    org.check = CheckConfig(limits=CheckLimits(state_bytes=600))
    async with checked_engine(tmp_path, clock, judge, org) as engine:
        await publish(engine, tmp_path, THREE)
        run_id = (await start(engine, "three-notes", {"ticket": "T-1"}))["run"]["id"]
        for step_id in ("one", "two", "three"):
            claimed = await claim(engine, run_id, step_id)
            view = ok(
                await call(engine, SCREENER, "submit", token=claimed["token"],
                           output={"note": step_id * 100}, summary="Wrote it."),
                "submit",
            )  # fmt: skip
            clock.advance(minutes=1)
        data = ok(await call(engine, SCREENER, "describe"), "describe")
    assert data["limits"]["checkStateBytes"] == 600
    [seen] = judge.requests
    assert list(seen.run_data["steps"]) == ["two"]
    assert seen.run_data["inputs"] == {"ticket": "T-1"}
    assert view["data"]["steps"]["three"]["check"] == verdict(
        "pass",
        [("The third note agrees with the first two.", "yes_no", 0.95, None, "pass")],
        truncated=True,
        at="2026-10-06T09:02:00Z",
    )


async def test_a_run_pinned_to_a_check_when_the_evaluator_is_gone_asks_for_a_retry(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with checked_engine(tmp_path, clock, Judge()) as engine:
        await publish(engine, tmp_path, text(SHORT))
        await publish(engine, tmp_path, text(ADVISORY).replace("one-question", "advised"))
        blocking = (await start(engine, "one-question", {"ticket": "T-1"}))["run"]["id"]
        advised = (await start(engine, "advised", {"ticket": "T-2"}))["run"]["id"]
        tokens = [(await claim(engine, run_id, "work"))["token"] for run_id in (blocking, advised)]
    async with checked_engine(tmp_path, clock, None) as engine:
        assert engine.profiles == ("parallel-1",)
        args = {"output": {"note": "Refunded."}, "summary": "Did it."}
        err(await call(engine, SCREENER, "submit", token=tokens[0], **args), "retry")
        view = ok(await call(engine, SCREENER, "submit", token=tokens[1], **args), "submit")
        still = ok(await call(engine, OPS, "get_run", runId=blocking), "get_run")
    assert step_states(still)["work"] == "claimed"
    assert view["data"]["steps"]["work"]["check"] == verdict(
        "error",
        [
            ("The note answers the ticket.", "yes_no", None, None, "unsure"),
            ("How complete is the note?", "rubric", None, None, "unsure"),
        ],
        advisory=True,
        model="none",
    )
