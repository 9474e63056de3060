"""The bar each check question had to clear, shown beside its answer.

A verdict records answers and results, not the thresholds they were measured against. Where the console
has the process document (embedded mode) the bar is the step's own `check` question with the server's
defaults filling what it leaves out, as the engine judges it; elsewhere only `describe.limits` is known,
so the bar shown is the server default and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.document.model import CheckQuestion, Process

Bars = Mapping[str, str]
"""Question text (`ask`) to the bar it had to clear, for one step."""


def _figure(value: Any) -> str:
    return "—" if value is None else f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _yes_no(pass_at: Any, fail_below: Any) -> str:
    fail = f"fail < {_figure(fail_below)}" if fail_below is not None else "fail below that"
    return f"pass ≥ {_figure(pass_at)}, {fail}"


def question_bar(question: CheckQuestion, limits: Mapping[str, Any]) -> str:
    """The question's thresholds, each left unwritten in the document taken from the server's limits."""
    if question.kind == "yes_no":
        pass_at = limits.get("checkPass") if question.pass_at is None else question.pass_at
        fail_below = limits.get("checkFail") if question.fail_below is None else question.fail_below
        return _yes_no(pass_at, fail_below)
    confidence = limits.get("checkConfidence") if question.confidence is None else question.confidence
    if question.kind == "choice":
        unsure = f"; unsure: {', '.join(question.unsure_choices)}" if question.unsure_choices else ""
        passing = f"pass: {', '.join(question.pass_choices)}{unsure}"
    else:
        passing = f"pass ≥ level {question.pass_level}"
    return f"{passing}; confidence ≥ {_figure(confidence)}"


def default_bar(kind: str, limits: Mapping[str, Any]) -> str:
    """What a console without the document can say: the server's defaults for the question's kind."""
    if kind == "yes_no":
        return "server default " + _yes_no(limits.get("checkPass"), limits.get("checkFail"))
    return f"server default confidence ≥ {_figure(limits.get('checkConfidence'))}"


def step_bars(document: Process | None, step_id: str, limits: Mapping[str, Any]) -> Bars:
    """Each of the step's questions to its bar; empty without the document or a `check` on the step."""
    if document is None:
        return {}
    step = next((s for s in document.steps if s.id == step_id), None)
    if step is None or not step.check:
        return {}
    return {question.ask: question_bar(question, limits) for question in step.check}


def bar_for(question: Mapping[str, Any], bars: Bars, limits: Mapping[str, Any]) -> str:
    """The step's own bar for this verdict question when known, else the server default for its kind."""
    ask = str(question.get("ask"))
    return bars[ask] if ask in bars else default_bar(str(question.get("kind")), limits)
