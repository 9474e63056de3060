"""From a submission to a check verdict: the rules of check profile §3, with no state of their own.

The runtime owns what a verdict does to a run (complete, refuse, escalate, retry); this module owns
how a verdict is reached and how it is written, so both can be tested without a store. Everything
here is a pure function of its arguments except `run_check`, which only adds the evaluator calls.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from engine.clock import rfc3339
from engine.document.model import CheckQuestion, Step
from engine.evaluator.base import (
    Answer,
    CheckRequest,
    Choice,
    Evaluator,
    EvaluatorError,
    Level,
    YesNo,
    check_answer,
)
from engine.evaluator.config import CheckLimits

log = logging.getLogger(__name__)

Result = Literal["pass", "fail", "unsure"]
VerdictKind = Literal["pass", "fail", "unsure", "error"]
Effect = Literal["complete", "not_accepted", "escalate", "retry"]

_RANK: dict[str, int] = {"pass": 0, "fail": 1, "unsure": 2}
"""Worst wins: unsure outranks fail, fail outranks pass (check profile §3)."""

ATTEMPTS = 2
"""The evaluator is asked once more after an error, then the verdict is `error`."""


@dataclass(frozen=True)
class Material:
    """What the submission brought, plus the run around it: the evaluator's view minus the question."""

    process: str
    body: str
    run_data: dict[str, Any]
    """The run data as the run view shows it; `run_check` cuts it to `checkStateBytes`."""
    output: dict[str, Any] | None = None
    summary: str | None = None
    evidence: tuple[dict[str, str], ...] = ()
    """`{kind, ref}` per item, as submitted."""


@dataclass(frozen=True)
class QuestionResult:
    question: CheckQuestion
    answer: Answer | None
    """None when the evaluator did not answer even on the second try."""
    result: Result
    pass_at: float | None = None
    """yes_no: the threshold that applied, so the issue line says `no` or `yes` as the judgement did."""
    confidence_at: float | None = None
    """choice and rubric: the confidence threshold that applied."""

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ask": self.question.ask, "kind": self.question.kind, "answer": None}
        match self.answer:
            case YesNo(p):
                out["answer"] = p
            case Choice(name, confidence):
                out["answer"] = name
                out["confidence"] = confidence
            case Level(level, confidence):
                out["answer"] = level
                out["confidence"] = confidence
        out["result"] = self.result
        return out


@dataclass(frozen=True)
class Verdict:
    verdict: VerdictKind
    advisory: bool
    model: str
    questions: tuple[QuestionResult, ...]
    at: datetime
    truncated: bool = False

    @property
    def effect(self) -> Effect:
        """What the runtime does with the submission. An advisory verdict never blocks, even `error`."""
        if self.advisory or self.verdict == "pass":
            return "complete"
        effects: dict[VerdictKind, Effect] = {"fail": "not_accepted", "unsure": "escalate", "error": "retry"}
        return effects[self.verdict]

    def wire(self) -> dict[str, Any]:
        """The check-verdict shape: for `steps.<id>.check`, `handoff.check` and `escalation.check`."""
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "advisory": self.advisory,
            "model": self.model,
            "questions": [q.wire() for q in self.questions],
        }
        if self.truncated:
            out["truncated"] = True
        out["at"] = rfc3339(self.at)
        return out


def json_size(value: Any) -> int:
    """Bytes of the compact UTF-8 JSON, the measure `checkStateBytes` is compared with."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def truncate_run_data(data: dict[str, Any], max_bytes: int) -> tuple[dict[str, Any], bool]:
    """Cut run data to `max_bytes` of JSON by dropping whole steps, oldest `at` first.

    Returns (data, truncated); the input is not changed. Sizes are tracked per step, so a large run
    costs one serialisation per step, not one per drop. If the inputs alone are still too large they
    are dropped too: the limit bounds what the evaluator is shown, and an evaluator prompt with no
    bound is the one thing this must not produce.
    """
    if json_size(data) <= max_bytes:
        return data, False
    steps: dict[str, Any] = dict(data.get("steps") or {})
    entry = {sid: json_size(sid) + 1 + json_size(value) for sid, value in steps.items()}
    base = json_size({**data, "steps": {}})
    total = base + sum(entry.values()) + max(len(steps) - 1, 0)
    for sid in sorted(steps, key=lambda s: _timestamp(steps[s])):
        if total <= max_bytes:
            break
        total -= entry[sid] + (1 if len(steps) > 1 else 0)
        del steps[sid]
    cut = {**data, "steps": steps}
    if total > max_bytes and "inputs" in cut:
        cut["inputs"] = {}
    return cut, True


def _timestamp(entry: Any) -> float:
    """Seconds since the epoch of a step entry's `at`; an entry without a readable one is the oldest."""
    at = entry.get("at") if isinstance(entry, dict) else None
    if not isinstance(at, str):
        return -math.inf
    try:
        when = datetime.fromisoformat(at)
    except ValueError:
        return -math.inf
    return when.timestamp() if when.tzinfo is not None else -math.inf


def judge(question: CheckQuestion, answer: Answer, limits: CheckLimits) -> QuestionResult:
    """Apply the question's thresholds, or the server's where the question sets none.

    A server-wide `checkFail` above a question's own `pass` is capped at that `pass`: the question
    then has no unsure band, as if no `fail` were set.
    """
    check_answer(question, answer)
    if isinstance(answer, YesNo):
        pass_at = limits.pass_at if question.pass_at is None else question.pass_at
        fail_below = limits.fail_below if question.fail_below is None else question.fail_below
        if answer.p >= pass_at:
            result: Result = "pass"
        elif fail_below is not None and answer.p >= min(fail_below, pass_at):
            result = "unsure"
        else:
            result = "fail"
        return QuestionResult(question, answer, result, pass_at=pass_at)
    confidence_at = limits.confidence if question.confidence is None else question.confidence
    if isinstance(answer, Choice):
        if answer.name in question.pass_choices:
            result = "pass"
        elif answer.name in question.unsure_choices:
            result = "unsure"
        else:
            result = "fail"
    else:
        if question.pass_level is None:
            raise ValueError(f"rubric question {question.ask!r} has no passing level")
        result = "pass" if answer.level >= question.pass_level else "fail"
    if answer.confidence < confidence_at:
        result = "unsure"
    return QuestionResult(question, answer, result, confidence_at=confidence_at)


async def _ask(evaluator: Evaluator, request: CheckRequest) -> Answer | None:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            answer = await evaluator.answer(request)
            check_answer(request.question, answer)
            return answer
        except EvaluatorError as exc:
            log.warning(
                "check %s.%s, attempt %d of %d, %r: %s",
                request.process,
                request.step_id,
                attempt,
                ATTEMPTS,
                request.question.ask,
                exc,
            )
    return None


async def run_check(
    evaluator: Evaluator, step: Step, material: Material, limits: CheckLimits, now: datetime
) -> Verdict:
    """Ask every question of the step's check, independently and at once, and reach the verdict.

    A question the evaluator cannot answer twice makes the verdict `error`; it is recorded with a null
    answer and `unsure`, the result that claims nothing.
    """
    if not step.check:
        raise ValueError(f"step {step.id!r} has no check")
    run_data, truncated = truncate_run_data(material.run_data, limits.state_bytes)
    requests = [
        CheckRequest(
            process=material.process,
            step_id=step.id,
            instructions=step.instructions or "",
            body=material.body,
            run_data=run_data,
            output=material.output,
            summary=material.summary,
            evidence=material.evidence,
            question=question,
        )
        for question in step.check
    ]
    answers = await asyncio.gather(*(_ask(evaluator, request) for request in requests))
    results = tuple(
        QuestionResult(question, None, "unsure") if answer is None else judge(question, answer, limits)
        for question, answer in zip(step.check, answers, strict=True)
    )
    verdict: VerdictKind
    if any(answer is None for answer in answers):
        verdict = "error"
    else:
        verdict = max((r.result for r in results), key=_RANK.__getitem__)
    return Verdict(verdict, step.advisory, evaluator.model, results, now, truncated)


def _figure(value: float, threshold: float) -> str:
    """`value` in as few decimals (two at least) as keep it on its side of `threshold`.

    `0.899` against a pass of 0.9 reads `0.899`, never `0.9`, so a refusal never shows a number that
    would have passed. Trailing zeros are dropped: `0.9`, `0.12`, `1`.
    """
    below = value < threshold
    for decimals in range(2, 7):
        shown = round(value, decimals)
        if (shown < threshold) == below:
            break
    else:
        scale = 10**6
        shown = (math.floor if below else math.ceil)(value * scale) / scale
    return f"{shown:.{decimals}f}".rstrip("0").rstrip(".")


def answer_text(result: QuestionResult) -> str:
    """The answer as an issue line words it (check profile §3)."""
    match result.answer:
        case YesNo(p):
            pass_at = 0.0 if result.pass_at is None else result.pass_at
            return f"{'no' if p < pass_at else 'yes'} ({_figure(p, pass_at)})"
        case Choice(name, confidence):
            return f"{name} ({_figure(confidence, result.confidence_at or 0.0)})"
        case Level(level, confidence):
            text = result.question.levels[level]
            return f"level {level}: {text} ({_figure(confidence, result.confidence_at or 0.0)})"
    return "no answer"


def issue_lines(verdict: Verdict) -> list[str]:
    """`check: <ask> → <answer>` for each failed question: the `issues` of a `not_accepted`."""
    return [f"check: {q.question.ask} → {answer_text(q)}" for q in verdict.questions if q.result == "fail"]
