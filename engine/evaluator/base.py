"""The one seam between the check profile and whatever model answers its questions.

The profile names no model or provider (check profile, preamble): anything that answers the three
question kinds conforms. The verdict logic therefore talks only to this Protocol, and treats every
answer as untrusted input: `check_answer` refuses an answer that does not fit its question, so a
confused or hostile evaluator produces an `error` verdict, never a wrong `pass`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from engine.document.model import CheckQuestion


class EvaluatorError(Exception):
    """The evaluator did not answer: unreachable, timed out, refused, or answered something malformed.

    The message is for the server log; it never carries a credential.
    """


class CheckConfigError(ValueError):
    """The `[check]` configuration or a scripted answers file is wrong. The message names the key."""


@dataclass(frozen=True)
class CheckRequest:
    """Everything one question is answered against (check profile §2, "What the evaluator sees").

    `process` and `step_id` let an evaluator key answers (the scripted one does); a model is shown only
    the material. `run_data` is already cut to `checkStateBytes`.
    """

    process: str
    step_id: str
    instructions: str
    body: str
    run_data: dict[str, Any]
    output: dict[str, Any] | None
    summary: str | None
    evidence: tuple[dict[str, str], ...]
    """The submission's evidence references, `{kind, ref}` each: the evaluator does not open files."""
    question: CheckQuestion


@dataclass(frozen=True)
class YesNo:
    """A yes/no answer: the probability of yes."""

    p: float


@dataclass(frozen=True)
class Choice:
    name: str
    confidence: float


@dataclass(frozen=True)
class Level:
    """A rubric answer: the 0-based level, worst first, as the question lists them."""

    level: int
    confidence: float


Answer = YesNo | Choice | Level


class Evaluator(Protocol):
    model: str
    """What answers, recorded on every verdict (`model`)."""

    async def answer(self, request: CheckRequest) -> Answer:
        """Answer the request's one question. Raises `EvaluatorError` when it cannot."""
        ...

    async def aclose(self) -> None:
        """Release connections; the server calls it once at shutdown."""
        ...


def _unit(value: Any) -> bool:
    """A number from 0 to 1; NaN fails the comparison, and a bool is not a number here."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0


def check_answer(question: CheckQuestion, answer: Answer) -> None:
    """Refuse an answer of the wrong kind or out of range, as an `EvaluatorError`."""
    if question.kind == "yes_no":
        if not isinstance(answer, YesNo):
            raise EvaluatorError(f"a yes/no question got a {type(answer).__name__} answer")
        if not _unit(answer.p):
            raise EvaluatorError(f"yes-probability {answer.p!r} is not a number from 0 to 1")
        return
    if question.kind == "choice":
        if not isinstance(answer, Choice):
            raise EvaluatorError(f"a choice question got a {type(answer).__name__} answer")
        names = [name for name, _ in question.choices]
        if answer.name not in names:
            raise EvaluatorError(f"choice {answer.name!r} is not one of {', '.join(names)}")
    else:
        if not isinstance(answer, Level):
            raise EvaluatorError(f"a rubric question got a {type(answer).__name__} answer")
        if (
            not isinstance(answer.level, int)
            or isinstance(answer.level, bool)
            or not 0 <= answer.level < len(question.levels)
        ):
            raise EvaluatorError(f"level {answer.level!r} is not from 0 to {len(question.levels) - 1}")
    if not _unit(answer.confidence):
        raise EvaluatorError(f"confidence {answer.confidence!r} is not a number from 0 to 1")
