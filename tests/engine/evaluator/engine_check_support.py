"""Helpers for the check-profile engine tests: a judge that answers by question text, the vendor-check
fixture driven to its check, and the check-verdict schema.

Import with `from tests.engine.evaluator.engine_check_support import ...`, fixtures included: `judge`
(a `Judge`) and `checked` (an engine with that judge as its evaluator and vendor-check published).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator import Answer, CheckRequest, Choice, EvaluatorError, Level, YesNo
from engine.org import OrgConfig
from tests.engine.engine_support import FIXTURES, MIRA, SCREENER, call, claim, make_org, ok, start, validator

YES_NO = "The cleared verdict matches what the attached report says."
CHOICE = "What does the summary do?"
RUBRIC = "How complete is the screening?"
VENDOR_BIND = {"finance-approver": "g_finance"}
VERDICT_VALIDATOR = validator("check-verdict.json")

PASSING: dict[str, Answer] = {YES_NO: YesNo(0.97), CHOICE: Choice("states", 0.93), RUBRIC: Level(2, 0.88)}
"""Answers that pass every vendor-check question."""

Scripted = Answer | EvaluatorError


@dataclass
class Judge:
    """An evaluator answering by question text: `script[ask]` is used in order, its last entry kept.

    Unlisted questions get `PASSING`. While `gate` is set and clear, every answer waits on it, so a
    test can act while a check is being evaluated; `asked` is set when the first question arrives.
    """

    script: dict[str, list[Scripted]] = field(default_factory=dict)
    model: str = "judge-1"
    requests: list[CheckRequest] = field(default_factory=list)
    gate: asyncio.Event | None = None
    asked: asyncio.Event = field(default_factory=asyncio.Event)

    def say(self, **answers: Scripted | list[Scripted]) -> None:
        """Replace the script: `yes_no=`, `choice=`, `rubric=` name the vendor-check questions."""
        asks = {"yes_no": YES_NO, "choice": CHOICE, "rubric": RUBRIC}
        self.script = {asks.get(k, k): v if isinstance(v, list) else [v] for k, v in answers.items()}

    async def answer(self, request: CheckRequest) -> Answer:
        self.requests.append(request)
        self.asked.set()
        if self.gate is not None:
            await self.gate.wait()
        ask = request.question.ask
        queue = self.script.get(ask)
        reply: Scripted = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else PASSING[ask]
        if isinstance(reply, EvaluatorError):
            raise reply
        return reply

    async def aclose(self) -> None:
        """Nothing to release."""

    def calls(self) -> int:
        return len(self.requests)


@asynccontextmanager
async def checked_engine(
    root: Path, clock: ManualClock, judge: Judge | None, org: OrgConfig | None = None
) -> AsyncIterator[Engine]:
    engine = await Engine.open(root / "data", org or make_org(), clock=clock, evaluator=judge)
    try:
        yield engine
    finally:
        await engine.close()


@pytest.fixture
def judge() -> Judge:
    return Judge()


@pytest.fixture
async def checked(tmp_path: Path, clock: ManualClock, judge: Judge) -> AsyncIterator[Engine]:
    async with checked_engine(tmp_path, clock, judge) as engine:
        await publish_vendor_check(engine)
        yield engine


async def publish_vendor_check(engine: Engine) -> None:
    result = await engine.publish(FIXTURES / "vendor-check", VENDOR_BIND)
    assert (result.ok, result.issues) == (True, []), result.issues


async def upload(engine: Engine, content: str = "c2NyZWVuaW5nIHJlcG9ydA==") -> dict[str, Any]:
    reply = await call(
        engine, SCREENER, "upload", fileName="report.txt", contentType="text/plain", contentBase64=content
    )
    return ok(reply, "upload")


@dataclass
class Screening:
    """A vendor-check run with its check_vendor step claimed and a report uploaded."""

    run_id: str
    token: str
    file: dict[str, Any]

    def submission(self, **changes: Any) -> dict[str, Any]:
        """A submit's arguments that pass the objective rules; `changes` replace or add keys."""
        args: dict[str, Any] = {
            "token": self.token,
            "output": {"cleared": True, "summary": "No hits on the OFAC or EU lists."},
            "evidence": [{"kind": "file", "ref": self.file["id"]}],
            "summary": "Searched both lists by legal name. No hits. Report attached.",
            "next": "approve",
            "reason": "The vendor is cleared.",
        }
        args.update(changes)
        return args

    def record(self, by: str = SCREENER.id, at: str = "2026-10-06T09:00:00Z") -> dict[str, Any]:
        """The run-data record `submission()` completes the step with (file URL left out)."""
        return {
            "output": {"cleared": True, "summary": "No hits on the OFAC or EU lists."},
            "evidence": [{"kind": "file", "ref": self.file["id"], "sha256": self.file["sha256"]}],
            "summary": "Searched both lists by legal name. No hits. Report attached.",
            "next": "approve",
            "reason": "The vendor is cleared.",
            "by": by,
            "at": at,
        }


async def screening(engine: Engine, vendor: str = "Acme") -> Screening:
    view = await start(engine, "vendor-check", {"vendorName": vendor, "amount": 48000}, who=MIRA)
    run_id = view["run"]["id"]
    claimed = await claim(engine, run_id, "check_vendor")
    return Screening(run_id, claimed["token"], await upload(engine))


async def submit(engine: Engine, screen: Screening, **changes: Any) -> dict[str, Any]:
    return await call(engine, SCREENER, "submit", **screen.submission(**changes))


def without_urls(value: Any) -> Any:
    """Run data as stored: file evidence without its short-lived `url`."""
    value = copy.deepcopy(value)
    if isinstance(value, dict):
        value.pop("url", None)
        return {k: without_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_urls(v) for v in value]
    return value


def verdict(
    kind: str,
    questions: list[tuple[str, str, Any, float | None, str]],
    *,
    advisory: bool = False,
    model: str = "judge-1",
    at: str = "2026-10-06T09:00:00Z",
    truncated: bool = False,
) -> dict[str, Any]:
    """A check-verdict wire shape from (ask, kind, answer, confidence, result) rows; it must validate."""
    wire: dict[str, Any] = {
        "verdict": kind,
        "advisory": advisory,
        "model": model,
        "questions": [
            {"ask": ask, "kind": qkind, "answer": answer, **({} if conf is None else {"confidence": conf}),
             "result": result}
            for ask, qkind, answer, conf, result in questions
        ],
    }  # fmt: skip
    if truncated:
        wire["truncated"] = True
    wire["at"] = at
    assert [e.message for e in VERDICT_VALIDATOR.iter_errors(wire)] == []
    return wire


def vendor_verdict(kind: str, yes: float, choice: tuple[str, float, str], level: tuple[int, float, str],
                   yes_result: str, **extra: Any) -> dict[str, Any]:  # fmt: skip
    return verdict(
        kind,
        [
            (YES_NO, "yes_no", yes, None, yes_result),
            (CHOICE, "choice", choice[0], choice[1], choice[2]),
            (RUBRIC, "rubric", level[0], level[1], level[2]),
        ],
        **extra,
    )


PASS_VERDICT = vendor_verdict("pass", 0.97, ("states", 0.93, "pass"), (2, 0.88, "pass"), "pass")
