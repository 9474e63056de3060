"""When a repeat of a write's `requestId` is the same call (spec §4): its fingerprint.

Two calls are the same when their arguments are the same JSON once each omitted argument that has a
default reads as that default written out (`mode` omitted is `"live"`). Same JSON is RFC 8785's
equality: numbers compare as the doubles RFC 8785 writes, so `1`, `1.0` and `1e0` are one number,
and so a client whose JSON library spells numbers its own way gets its original result back. The
text hashed is not RFC 8785's own (that encoder is pure Python, several times slower on a large
submission) but the C encoder's, sorted, over the arguments with every number as the one Python
value its double stands for; two texts are equal exactly when RFC 8785's would be. An integer no
double holds exactly stays itself, where RFC 8785 would round it: the engine keeps numbers exactly
(and refuses such an integer over HTTP), so the call that sent it is another call.

Records written before hold the SHA-256 of the arguments' text as sent (`legacy`); a repeat sent the
same way still matches one, so an upgrade keeps answering the retries of calls made before it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticUndefined

from engine.store.records import canonical
from engine.tools.arguments import ARGUMENTS

EXACT = 2**53
"""Integers up to this size are exactly a double, and an integral double below it is exactly one."""

DEFAULTS: dict[str, dict[str, Any]] = {
    tool: {
        name: field.default
        for name, field in model.model_fields.items()
        if field.default is not None and field.default is not PydanticUndefined
    }
    for tool, model in ARGUMENTS.items()
}
"""Each tool's arguments that have a default, and that default: the schema's, from the models."""


@dataclass(frozen=True)
class Fingerprint:
    digest: str
    """What a write records beside its result, and a repeat is compared with."""
    tool: str
    arguments: dict[str, Any]

    def matches(self, recorded: str) -> bool:
        return recorded == self.digest or recorded == legacy(self.tool, self.arguments)


def of(tool: str, arguments: dict[str, Any], *, strict: bool = False) -> Fingerprint | None:
    """The call's fingerprint, but for its requestId; None (`strict`: the error) when JSON cannot
    carry the arguments, the requestId included."""
    rest = {**DEFAULTS[tool], **arguments}
    request_id = rest.pop("requestId", None)
    try:
        text = canonical([tool, _as_doubles(rest)]).encode()
        # A string (the usual requestId) JSON carries unless it holds a lone surrogate: encoding says.
        request_id.encode() if isinstance(request_id, str) else canonical(request_id).encode()
    except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError
        if strict:
            raise
        return None
    return Fingerprint(hashlib.sha256(text).hexdigest(), tool, arguments)


def legacy(tool: str, arguments: dict[str, Any]) -> str:
    """The fingerprint records were written with before: the arguments' own text, numbers as sent."""
    rest = {name: value for name, value in arguments.items() if name != "requestId"}
    return hashlib.sha256(canonical([tool, rest]).encode()).hexdigest()


def _as_doubles(value: Any) -> Any:
    """`value` with each number as the Python value of the double RFC 8785 writes for it: an integral
    one as an int up to `EXACT`, as a float beyond. Containers are copied only where a number changed."""
    kind = type(value)
    if kind is float:
        return int(value) if value.is_integer() and -EXACT <= value <= EXACT else value
    if kind is int:
        if -EXACT <= value <= EXACT:
            return value
        try:
            double = float(value)
        except OverflowError:
            return value
        return double if double == value else value
    if kind is dict:
        changed: dict[str, Any] | None = None
        for key, item in value.items():
            if (now := _as_doubles(item)) is not item:
                changed = changed if changed is not None else dict(value)
                changed[key] = now
        return value if changed is None else changed
    if kind is list:
        items: list[Any] | None = None
        for i, item in enumerate(value):
            if (now := _as_doubles(item)) is not item:
                items = items if items is not None else list(value)
                items[i] = now
        return value if items is None else items
    return value
