"""Each tool's arguments as a strict pydantic model: the MCP input schema and the first check of a call.

A call whose arguments break its model is `invalid` before any rule is looked at (spec §6 rule 3), with
one issue per problem in the wire form `runId: required`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

RequestId = Annotated[str, Field(min_length=1, max_length=128)]
Note = Annotated[str, Field(max_length=4000)]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EvidenceItem(_Args):
    kind: Literal["file", "link"]
    ref: Annotated[str, Field(min_length=1, max_length=2048)]


class DescribeArgs(_Args):
    pass


class ListProcessesArgs(_Args):
    cursor: str | None = None


class StartRunArgs(_Args):
    process: str
    version: Annotated[int, Field(gt=0, le=9007199254740991)] | None = None
    inputs: dict[str, Any]
    mode: Literal["live", "test"] = "live"
    requestId: RequestId


class GetRunArgs(_Args):
    runId: str


class GetWorkArgs(_Args):
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    cursor: str | None = None
    process: str | None = None


class ClaimArgs(_Args):
    runId: str
    stepId: str
    requestId: RequestId


class RenewArgs(_Args):
    token: str
    progress: Note | None = None
    requestId: RequestId


class UploadArgs(_Args):
    fileName: Annotated[str, Field(min_length=1, max_length=255)]
    contentType: Annotated[str, Field(min_length=1, max_length=160)]
    contentBase64: Annotated[str, Field(min_length=1)]
    requestId: RequestId


class SubmitArgs(_Args):
    token: str
    output: dict[str, Any]
    evidence: list[EvidenceItem] | None = None
    summary: Annotated[str, Field(max_length=2000)]
    next: str | None = None
    reason: Note | None = None
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
    output: dict[str, Any] | None = None
    evidence: list[EvidenceItem] | None = None
    summary: Annotated[str, Field(max_length=2000)] | None = None
    next: str | None = None
    reason: Note | None = None
    note: Note | None = None
    requestId: RequestId

    @model_validator(mode="after")
    def _fields_the_decision_takes(self) -> DecideArgs:
        """tools.md `decide`: fields a decision does not take are `invalid`, whatever the work item."""
        problems: list[str] = []
        if self.decision != "completed":
            problems += [
                f"{name}: not taken by decision {self.decision}"
                for name in _COMPLETED_ONLY
                if _set(self, name)
            ]
        elif self.note is not None:
            problems.append("note: not taken by decision completed")
        if self.decision in ("rejected", "returned", "failed") and not (self.note or "").strip():
            problems.append(f"note: required for decision {self.decision}")
        if problems:
            raise ValueError("; ".join(problems))
        return self


_COMPLETED_ONLY = ("output", "evidence", "summary", "next", "reason")


def _set(model: BaseModel, name: str) -> bool:
    return getattr(model, name) is not None


class CancelArgs(_Args):
    runId: str
    reason: Note
    requestId: RequestId


class SendEventArgs(_Args):
    runId: str
    name: str
    data: dict[str, Any] | None = None
    requestId: RequestId


class ListRunsArgs(_Args):
    process: str | None = None
    state: Literal["active", "waiting", "ended", "cancelled"] | None = None
    inputs: dict[str, Any] | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    cursor: str | None = None


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


def issues_of(error: ValidationError) -> list[str]:
    """Pydantic's errors in the wire form: `<path>: <what is wrong>`, one per problem, in order."""
    issues: list[str] = []
    for err in error.errors(include_url=False):
        path = _path(err["loc"])
        kind = err["type"]
        if kind == "value_error":
            issues.extend(part for part in str(err["ctx"]["error"]).split("; "))
            continue
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
