"""The `check-1` profile: a model answers fixed questions about each submission (check profile).

What the runtime calls, in `submit` and `decide`, once the objective rules passed:

    verdict = await run_check(evaluator, step, Material(...), limits, clock.now())
    verdict.effect       # complete | not_accepted | escalate | retry
    verdict.wire()       # steps.<id>.check, handoff.check or escalation.check
    issue_lines(verdict) # handoff.issues and the `not_accepted` issues on a fail

At start: `build_evaluator(parse_check_config(table, config_file))` gives the evaluator, or None when
none is configured (then the server does not list `check-1`); `CheckLimits.wire()` gives the check
keys of `describe.limits`.
"""

from engine.evaluator.base import (
    Answer,
    CheckConfigError,
    CheckRequest,
    Choice,
    Evaluator,
    EvaluatorError,
    Level,
    YesNo,
)
from engine.evaluator.config import CheckConfig, CheckLimits, build_evaluator, parse_check_config
from engine.evaluator.verdict import (
    Material,
    QuestionResult,
    Verdict,
    issue_lines,
    judge,
    run_check,
    truncate_run_data,
)

__all__ = [
    "Answer",
    "CheckConfig",
    "CheckConfigError",
    "CheckLimits",
    "CheckRequest",
    "Choice",
    "Evaluator",
    "EvaluatorError",
    "Level",
    "Material",
    "QuestionResult",
    "Verdict",
    "YesNo",
    "build_evaluator",
    "issue_lines",
    "judge",
    "parse_check_config",
    "run_check",
    "truncate_run_data",
]
