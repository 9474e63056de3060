"""How the validator's rules word an issue, shared so every message names its offender the same way."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from engine.document.model import Issue

NAME_PATTERN = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
"""Process names and `requires.systems` entries (spec §2.1)."""
NAME_MAX = 64
STEP_ID_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,63}")
"""Step ids, and event names (spec §2.2, §3.6)."""

_SHOWN_CHARS = 60


class Report:
    """Collects issues in the order rules find them, so every problem comes back in one pass.

    An issue refuses the document: only what spec §2 (or a profile, or a shared schema) says to refuse.
    A warning names something an author almost surely did not mean, which the spec does not refuse;
    the document stays publishable, and `apc validate --strict` treats warnings as issues.
    """

    def __init__(self) -> None:
        self.issues: list[Issue] = []
        self.warnings: list[Issue] = []

    def add(self, path: str, message: str) -> None:
        self.issues.append(Issue(path, message))

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(Issue(path, message))


def join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def show(value: Any) -> str:
    """A short rendering of a written value: quoted text, or its kind and a glimpse of it."""
    if isinstance(value, str):
        text = value.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        if len(text) > _SHOWN_CHARS:
            text = text[: _SHOWN_CHARS - 1] + "…"
        return f"'{text}'"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"a {type(value).__name__}"


def is_number(value: Any) -> bool:
    """A JSON number: an int or a finite float, never a boolean."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def is_text(value: Any) -> bool:
    """A string with something in it besides whitespace."""
    return isinstance(value, str) and bool(value.strip())


def article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"
