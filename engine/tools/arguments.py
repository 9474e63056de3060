"""Each tool's arguments as a strict pydantic model: the MCP input schema and the first check of a call.

A call whose arguments break its model is `invalid` before any rule is looked at (spec §6 rule 3), with
one issue per problem in the wire form `runId: required`. The models say only what the tool's JSON
Schema says; rules a schema cannot state (which fields a decision takes, an event name's pattern) are
the tools' own, checked after `run_ended` (spec §3.5).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from engine.store.records import compact_bytes

T = TypeVar("T")


def _whole(value: Any) -> Any:
    """JSON Schema `integer` is any number with a zero fractional part, so `2.0` is the integer 2."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _refuse_null(value: Any) -> Any:
    if value is None:
        raise PydanticCustomError("null_given", "null given")
    return value


def _without_null(schema: dict[str, Any]) -> None:
    variants = schema.pop("anyOf", None)
    if variants:
        schema.update(next(v for v in variants if v.get("type") != "null"))
    schema.pop("default", None)


Omittable = Annotated[T | None, BeforeValidator(_refuse_null), Field(json_schema_extra=_without_null)]
"""An optional argument: absent reads as None, but an explicit null breaks the schema (which types
optional arguments without `null`), so it is refused rather than read as absent."""

WHOLE = BeforeValidator(_whole)
"""Placed after an integer's bounds, so the bounds still show in the JSON schema."""

RequestId = Annotated[str, Field(min_length=1, max_length=128)]
Note = Annotated[str, Field(max_length=4000)]
Limit = Annotated[int, Field(ge=1, le=100), WHOLE]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EvidenceItem(_Args):
    kind: Literal["file", "link"]
    ref: Annotated[str, Field(min_length=1)]
    """Unbounded like the schema: a link is recorded as stated (spec §5); the run-data cap bounds it."""


class DescribeArgs(_Args):
    pass


class ListProcessesArgs(_Args):
    cursor: Omittable[str] = None


class StartRunArgs(_Args):
    process: str
    version: Omittable[Annotated[int, Field(gt=0, le=9007199254740991), WHOLE]] = None
    inputs: dict[str, Any]
    mode: Literal["live", "test"] = "live"
    requestId: RequestId


class GetRunArgs(_Args):
    runId: str


class RunLogArgs(_Args):
    """`apc_run_log`, an extra read beside the fourteen (`engine.tools.run_log`)."""

    runId: Annotated[str, Field(min_length=1, description="The run whose log to read.")]
    cursor: Annotated[
        Omittable[str], Field(description="nextCursor of the page before; omit for the first.")
    ] = None
    limit: Annotated[Omittable[Limit], Field(description="Entries per page, 1 to 100 (default 100).")] = None


class GetWorkArgs(_Args):
    limit: Limit = 20
    cursor: Omittable[str] = None
    process: Omittable[str] = None


class ClaimArgs(_Args):
    runId: str
    stepId: str
    requestId: RequestId


class RenewArgs(_Args):
    token: str
    progress: Omittable[Note] = None
    requestId: RequestId


class UploadArgs(_Args):
    fileName: Annotated[str, Field(min_length=1, max_length=255)]
    contentType: Annotated[str, Field(min_length=1, max_length=160)]
    contentBase64: Annotated[str, Field(min_length=1)]
    requestId: RequestId


class SubmitArgs(_Args):
    token: str
    output: dict[str, Any]
    evidence: Omittable[list[EvidenceItem]] = None
    summary: Annotated[str, Field(max_length=2000)]
    next: Omittable[str] = None
    reason: Omittable[Note] = None
    requestId: RequestId


class EscalateArgs(_Args):
    token: str
    note: Note
    requestId: RequestId


Decision = Literal["completed", "approved", "rejected", "returned", "failed"]


class DecideArgs(_Args):
    runId: str
    workItemId: str
    snapshot: str
    decision: Decision
    output: Omittable[dict[str, Any]] = None
    evidence: Omittable[list[EvidenceItem]] = None
    summary: Omittable[Annotated[str, Field(max_length=2000)]] = None
    next: Omittable[str] = None
    reason: Omittable[Note] = None
    note: Omittable[Note] = None
    requestId: RequestId


class CancelArgs(_Args):
    runId: str
    reason: Note
    requestId: RequestId


class SendEventArgs(_Args):
    runId: str
    name: str
    data: Omittable[dict[str, Any]] = None
    requestId: RequestId


class ListRunsArgs(_Args):
    process: Omittable[str] = None
    state: Omittable[Literal["active", "waiting", "ended", "cancelled"]] = None
    inputs: Omittable[dict[str, Any]] = None
    limit: Limit = 20
    cursor: Omittable[str] = None


ARGUMENTS: dict[str, type[BaseModel]] = {
    "describe": DescribeArgs,
    "list_processes": ListProcessesArgs,
    "start_run": StartRunArgs,
    "get_run": GetRunArgs,
    "get_work": GetWorkArgs,
    "claim": ClaimArgs,
    "renew": RenewArgs,
    "upload": UploadArgs,
    "submit": SubmitArgs,
    "escalate": EscalateArgs,
    "decide": DecideArgs,
    "cancel": CancelArgs,
    "send_event": SendEventArgs,
    "list_runs": ListRunsArgs,
}


def unreadable(value: Any, path: str = "") -> list[str]:
    """Where `value` holds what JSON cannot carry: NaN or an infinity (spec §2.3: numbers are JSON
    numbers), or text with a lone surrogate (not Unicode, so it could be neither stored nor sent back).

    JSON text arrives over HTTP, where parsers refuse lone surrogates and the edge also refuses numbers
    a float would round (`engine.http.numbers`); an embedded caller hands values over directly, so this
    check is the engine's own. The offending text itself is never echoed in an issue.
    """
    if not path:  # the whole value at once: JSON text refuses both (found item by item only if it does)
        try:
            compact_bytes(value)
            return []
        except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError
            pass
    if isinstance(value, float):
        return [] if math.isfinite(value) else [f"{path}: not a finite number"]
    if isinstance(value, str):
        return [] if _is_unicode(value) else [f"{path}: not valid Unicode text"]
    if isinstance(value, dict):
        issues: list[str] = []
        for key, item in value.items():
            if isinstance(key, str) and not _is_unicode(key):
                issues.append(f"{path}: not valid Unicode text")
                continue
            issues += unreadable(item, f"{path}.{key}" if path else str(key))
        return issues
    if isinstance(value, list):
        return [issue for i, item in enumerate(value) for issue in unreadable(item, f"{path}[{i}]")]
    return []


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def issues_of(error: ValidationError) -> list[str]:
    """Pydantic's errors in the wire form: `<path>: <what is wrong>`, one per problem, in order."""
    issues: list[str] = []
    for err in error.errors(include_url=False):
        path = _path(err["loc"])
        kind = err["type"]
        issues.append(f"{path}: {_message(kind, err)}" if path else _message(kind, err))
    return issues


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_EXPECTED = {
    "string_type": "expected string",
    "int_type": "expected integer",
    "dict_type": "expected object",
    "list_type": "expected list",
    "model_type": "expected object",
    "model_attributes_type": "expected object",
    "null_given": "must be omitted, not null",
}


def _message(kind: str, err: Any) -> str:
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "not allowed"
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind == "literal_error":
        return "expected one of " + str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
    if kind == "string_too_short":
        return (
            "must not be empty" if ctx.get("min_length") == 1 else f"at least {ctx['min_length']} characters"
        )
    if kind == "string_too_long":
        return f"at most {ctx['max_length']} characters"
    if kind in ("greater_than", "greater_than_equal", "less_than_equal", "less_than"):
        bound = {"greater_than": ">", "greater_than_equal": ">=", "less_than_equal": "<=", "less_than": "<"}[
            kind
        ]
        limit = next(iter(ctx.values()), "")
        return f"must be {bound} {limit}"
    return "not valid"
