"""The server's answer to an action as the lines a person reads."""

from __future__ import annotations

from console.client.wire import Failure, SendEventResult, StepView
from console.views.answer import error_lines, event_line, run_state_line
from tests.console.console_support import a_run, a_view


def test_answers_read_as_the_new_state_or_every_issue() -> None:
    steps: list[StepView] = [
        {"id": "a", "kind": "agent", "state": "done"},
        {"id": "b", "kind": "approve", "state": "waiting"},
    ]
    view = a_view(a_run("r_1", "waiting"), steps)
    assert run_state_line(view) == "r_1 waiting at b"
    ended = a_view(a_run("r_1", "ended", "onboarded"))
    assert run_state_line(ended) == "r_1 ended: onboarded"
    held: SendEventResult = {"consumedBy": None}
    assert event_line(held) == "held: no wait for it is ready yet"
    error: Failure = {
        "ok": False,
        "error": {"code": "invalid", "message": "bad", "issues": ["a: missing", "b: x"]},
    }
    assert error_lines(error) == ["invalid: bad", "  • a: missing", "  • b: x"]
