"""The server's answer to an action, as the lines a person reads: the new state, or every issue."""

from __future__ import annotations

from typing import Any

from console.client.envelope import Envelope, error_code, error_issues, error_message


def run_state_line(view: dict[str, Any]) -> str:
    """`r_8f2 waiting at approve` or `r_8f2 ended: onboarded`."""
    run = view.get("run") or {}
    state = run.get("state")
    if state in ("ended", "cancelled"):
        outcome = run.get("outcome")
        return f"{run.get('id')} {state}" + (f": {outcome}" if outcome else "")
    current = [s["id"] for s in view.get("steps") or () if s.get("state") in ("ready", "claimed", "waiting")]
    where = f" at {', '.join(current)}" if current else ""
    return f"{run.get('id')} {state}{where}"


def answer_lines(envelope: Envelope) -> list[str]:
    if not envelope.get("ok"):
        lines = [f"{error_code(envelope)}: {error_message(envelope)}"]
        lines += [f"  • {issue}" for issue in error_issues(envelope)]
        return lines
    data = envelope.get("data")
    if isinstance(data, dict) and "run" in data and "steps" in data:
        return [run_state_line(data)]
    if isinstance(data, dict) and "consumedBy" in data:
        consumed = data["consumedBy"]
        return [f"consumed by step {consumed}" if consumed else "held: no wait for it is ready yet"]
    return ["done"]


def answer_summary(envelope: Envelope) -> str:
    return "\n".join(answer_lines(envelope))
