"""The server's answer to an action, as the lines a person reads: the new state, or every issue."""

from __future__ import annotations

from console.client.envelope import error_code, error_issues, error_message
from console.client.wire import Failure, RunView, SendEventResult
from console.views.format import short_id

CURRENT = ("ready", "claimed", "waiting")
"""Step states where a run is now."""
OVER = ("ended", "cancelled")
"""Run states from which a run does nothing more."""


def run_state_line(view: RunView) -> str:
    """`r_8f2 waiting at approve` or `r_8f2 ended: onboarded`."""
    run = view["run"]
    state = run["state"]
    if state in OVER:
        outcome = run["outcome"]
        return f"{run['id']} {state}" + (f": {outcome}" if outcome else "")
    current = [step["id"] for step in view["steps"] if step["state"] in CURRENT]
    where = f" at {', '.join(current)}" if current else ""
    return f"{run['id']} {state}{where}"


def run_now_line(view: RunView) -> str:
    """`r_7d64… now waiting at lead_approval`: what a decision left the run doing, id shortened."""
    run = view["run"]
    return f"{short_id(run['id'])} now" + run_state_line(view).removeprefix(run["id"])


def event_line(result: SendEventResult) -> str:
    consumed = result["consumedBy"]
    return f"consumed by step {consumed}" if consumed else "held: no wait for it is ready yet"


def error_lines(answer: Failure) -> list[str]:
    """The error code and message, then every issue."""
    lines = [f"{error_code(answer)}: {error_message(answer)}"]
    lines += [f"  • {issue}" for issue in error_issues(answer)]
    return lines
