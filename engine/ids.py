"""Where run, work item and file ids come from: random by default, injectable like the clock.

Ids are opaque to callers, so any source of unique prefixed strings will do; a fixed sequence lets a
test or a screenshot name the same run the same way every time.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

IdSource = Callable[[str], str]
"""A prefix (`r`, `w`, `f`) to a fresh id that starts with it and an underscore."""


def new_id(prefix: str) -> str:
    """The default source: 80 random bits, unguessable as well as unique."""
    return f"{prefix}_{secrets.token_hex(10)}"
