"""Numbers kept exactly (spec §2.3: numbers are JSON numbers, and a server must not round them).

The MCP SDK parses a request into Python floats before the engine sees it, so `1.00000000000000000001`
arrives as `1.0` and `1e309` as infinity. This module reads the raw JSON text of a `tools/call` once
more, keeping every number as written, and names each one in the arguments that a 64-bit float would
change (the form every JSON peer and RFC 8785 hashing use) or that is not finite. Numbers anywhere else
in the message (the JSON-RPC `id`, `_meta`) are the protocol's business, not the tool's.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any


class _Number(str):
    """A number's text exactly as the client wrote it."""


def _number(text: str) -> _Number:
    return _Number(text)


def number_issues(body: bytes) -> list[str]:
    """One issue per number in a `tools/call`'s arguments that cannot be kept exactly.

    Anything that is not such a call, or not JSON at all, has no issues here: the transport answers
    it as it would anyway.
    """
    try:
        message = json.loads(body, parse_float=_number, parse_int=_number, parse_constant=_number)
    except (ValueError, RecursionError):
        return []
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return []
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if not isinstance(arguments, dict):
        return []
    return list(_walk(arguments, ""))


def _walk(value: Any, path: str) -> Any:
    if isinstance(value, _Number):
        problem = _problem(value)
        if problem is not None:
            yield f"{path}: {value} {problem}"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def _problem(text: str) -> str | None:
    """Why a number's text cannot be kept, or None: finite, and unchanged through a 64-bit float."""
    number = float(text)
    if not math.isfinite(number):
        return "is not a finite number"
    try:
        exact = Decimal(text) == Decimal(repr(number))
    except InvalidOperation:
        exact = False
    return None if exact else "cannot be kept exactly (a 64-bit float would round it)"
