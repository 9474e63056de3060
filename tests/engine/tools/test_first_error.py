"""`errors.first_error`: the applicable checks run in PRECEDENCE order, the first failure is raised, and a
check PRECEDENCE does not know is a programming error."""

from __future__ import annotations

import pytest

from engine.tools.errors import Check, ToolError, first_error, forbidden, run_ended


def test_the_first_failure_in_precedence_order_is_raised_and_later_checks_do_not_run() -> None:
    ran: list[str] = []

    def check(name: str, error: ToolError | None) -> Check:
        def run() -> ToolError | None:
            ran.append(name)
            return error

        return run

    with pytest.raises(ToolError) as raised:
        first_error(
            {
                "forbidden": check("forbidden", forbidden("no")),
                "stale": check("stale", None),
                "run_ended": check("run_ended", None),
                "not_found": check("not_found", run_ended()),
            }
        )
    assert raised.value.issues == ["run_ended"]
    assert ran == ["run_ended", "not_found"]


def test_no_failure_raises_nothing() -> None:
    first_error({"stale": lambda: None})
    first_error({})


def test_an_unknown_check_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown checks: \['late', 'soon'\]"):
        first_error({"soon": lambda: None, "stale": lambda: None, "late": lambda: None})
