"""The few ways the console reads a tool's answer, and the failures it makes itself.

The shapes are in `wire.py` (generated from the schemas): `Envelope[T]` is `Ok[T] | Failure`, told apart
by `answer["ok"]`.
"""

from __future__ import annotations

from console.client.wire import ErrorCode, Failure


def failure(code: ErrorCode, message: str, issues: list[str] | None = None) -> Failure:
    """An error envelope made on the client side (transport failures, features a server lacks)."""
    if issues:
        return {"ok": False, "error": {"code": code, "message": message, "issues": issues}}
    return {"ok": False, "error": {"code": code, "message": message}}


def error_code(answer: Failure) -> str:
    return answer["error"]["code"]


def error_issues(answer: Failure) -> list[str]:
    return [str(issue) for issue in answer["error"].get("issues") or ()]


def error_message(answer: Failure) -> str:
    return answer["error"]["message"]
