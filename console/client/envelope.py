"""The wire envelope every tool answers with, and the few ways the console reads it."""

from __future__ import annotations

from typing import Any

Envelope = dict[str, Any]
"""`{"ok": True, "data": ...}` or `{"ok": False, "error": {"code", "message", "issues"?}}`."""


def failure(code: str, message: str, issues: list[str] | None = None) -> Envelope:
    """An error envelope made on the client side (transport failures, features a server lacks)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if issues:
        error["issues"] = issues
    return {"ok": False, "error": error}


def error_code(envelope: Envelope) -> str | None:
    return None if envelope.get("ok") else str(envelope.get("error", {}).get("code", "invalid"))


def error_issues(envelope: Envelope) -> list[str]:
    if envelope.get("ok"):
        return []
    return [str(issue) for issue in envelope.get("error", {}).get("issues") or []]


def error_message(envelope: Envelope) -> str:
    if envelope.get("ok"):
        return ""
    return str(envelope.get("error", {}).get("message", ""))
