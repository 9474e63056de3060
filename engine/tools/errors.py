"""Errors are values (DESIGN principle 5): one exception type carrying a wire error, and the one
function that fixes which of several applicable errors a caller sees (spec §3.4, tools.md `decide`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

ErrorCode = Literal["invalid", "not_accepted", "stale", "conflict", "forbidden", "not_found", "retry"]

PRECEDENCE = ("run_ended", "already_decided", "not_found", "stale", "forbidden")
"""The order write checks run in, for every tool: a run that ended is reported before anything else,
an item already decided before its snapshot, and so on."""
_KNOWN = frozenset(PRECEDENCE)


class ToolError(Exception):
    def __init__(
        self, code: ErrorCode, message: str, issues: list[str] | None = None, *, keep: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.issues = issues
        self.keep = keep
        """Commit what the call wrote before failing (a refused submission's handoff), unrecorded."""

    def wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.issues is not None:
            error["issues"] = self.issues
        return {"ok": False, "error": error}


def invalid(message: str, issues: list[str] | None = None) -> ToolError:
    return ToolError("invalid", message, issues)


def not_found(what: str) -> ToolError:
    return ToolError("not_found", f"{what} not found in this organization")


def forbidden(message: str) -> ToolError:
    return ToolError("forbidden", message)


def conflict(message: str, issue: str) -> ToolError:
    return ToolError("conflict", message, [issue])


def run_ended() -> ToolError:
    return ToolError("conflict", "the run has ended", ["run_ended"])


Check = Callable[[], "ToolError | None"]


def first_error(checks: Mapping[str, Check]) -> None:
    """Run the applicable checks in PRECEDENCE order and raise the first failure.

    Each tool names the checks that apply to it; the order is never the tool's choice.
    """
    if not _KNOWN.issuperset(checks):
        raise ValueError(f"unknown checks: {sorted(checks.keys() - _KNOWN)}")
    for name in PRECEDENCE:
        if name in checks and (error := checks[name]()) is not None:
            raise error
