"""The bar each check question had to clear, shown beside its answer.

A verdict records answers and results, not the thresholds they were measured against. Where the console
has the process document (embedded mode) the bar is the step's own `check` question with the server's
defaults filling what it leaves out, as the engine judges it; elsewhere only `describe.limits` is known,
so the bar shown is the server default and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from console.client.wire import Limits, VerdictQuestion
from engine.document.model import CheckQuestion, Process

Bars = Mapping[str, str]
"""Question text (`ask`) to the bar it had to clear, for one step."""


def _default(
    limits: Limits | None, key: Literal["checkPass", "checkFail", "checkConfidence"]
) -> float | None:
    """The server's default threshold; unknown (None) when `describe` could not be read."""
    return None if limits is None else limits[key]


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def _yes_no(pass_at: float | None, fail_below: float | None) -> str:
    fail = f"fail < {_figure(fail_below)}" if fail_below is not None else "fail below that"
    return f"pass ≥ {_figure(pass_at)}, {fail}"


def question_bar(question: CheckQuestion, limits: Limits | None) -> str:
    """The question's thresholds, each left unwritten in the document taken from the server's limits."""
    if question.kind == "yes_no":
        pass_at = question.pass_at if question.pass_at is not None else limits and limits["checkPass"]
        fail_below = (
            question.fail_below if question.fail_below is not None else limits and limits["checkFail"]
        )
        return _yes_no(pass_at, fail_below)
    confidence = (
        question.confidence if question.confidence is not None else limits and limits["checkConfidence"]
    )
    if question.kind == "choice":
        unsure = f"; unsure: {', '.join(question.unsure_choices)}" if question.unsure_choices else ""
        passing = f"pass: {', '.join(question.pass_choices)}{unsure}"
    else:
        passing = f"pass ≥ level {question.pass_level}"
    return f"{passing}; confidence ≥ {_figure(confidence)}"


def default_bar(kind: str, limits: Limits | None) -> str:
    """What a console without the document can say: the server's defaults for the question's kind."""
    if kind == "yes_no":
        return "server default " + _yes_no(_default(limits, "checkPass"), _default(limits, "checkFail"))
    return f"server default confidence ≥ {_figure(_default(limits, 'checkConfidence'))}"


def step_bars(document: Process | None, step_id: str, limits: Limits | None) -> Bars:
    """Each of the step's questions to its bar; empty without the document or a `check` on the step."""
    if document is None:
        return {}
    step = next((s for s in document.steps if s.id == step_id), None)
    if step is None or not step.check:
        return {}
    return {question.ask: question_bar(question, limits) for question in step.check}


def bar_for(question: VerdictQuestion, bars: Bars, limits: Limits | None) -> str:
    """The step's own bar for this verdict question when known, else the server default for its kind."""
    ask = question["ask"]
    return bars[ask] if ask in bars else default_bar(question["kind"], limits)
