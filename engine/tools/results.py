"""What each tool answers, as typed shapes: the `data` of `{ok: true, data}` and the `error` of
`{ok: false, error}`.

The views and read tools build these shapes; the MCP endpoint turns them into each tool's
`outputSchema`, so clients can check and type what they receive. They say what this server really
sends (versions are integers, optional keys are absent rather than null). A key marked
`NotRequired` may be missing; `X | None` is always present and may be null.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, NotRequired, TypeVar

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

CLOSED = ConfigDict(extra="forbid")
"""Every shape is closed: a key this server does not send is not in its schema either."""

T = TypeVar("T")

ErrorCode = Literal["invalid", "not_accepted", "stale", "conflict", "forbidden", "not_found", "retry"]
Mode = Literal["live", "test"]
RunState = Literal["active", "waiting", "ended", "cancelled"]
StepKind = Literal["agent", "task", "approve", "wait", "wait_until", "wait_for", "finish", "parallel"]
StepState = Literal["ready", "claimed", "waiting", "done", "failed", "cancelled"]
ItemKind = Literal["agent", "task", "approve"]
Decision = Literal["completed", "approved", "rejected", "returned", "failed"]
EvidenceKind = Literal["file", "link"]
FieldType = Literal["string", "number", "boolean", "date", "datetime", "list", "object", "person"]


@with_config(CLOSED)
class ToolError(TypedDict):
    code: ErrorCode
    message: str
    issues: NotRequired[list[str]]


@with_config(CLOSED)
class Success(TypedDict, Generic[T]):
    ok: Literal[True]
    data: T


@with_config(CLOSED)
class Failure(TypedDict):
    ok: Literal[False]
    error: ToolError


# --- process documents as the tools quote them ----------------------------------------------------


@with_config(CLOSED)
class FieldSpec(TypedDict):
    """A field declared as a mapping (spec §2.3); the short form is the bare type name."""

    type: FieldType
    description: NotRequired[str]
    optional: NotRequired[bool]
    one_of: NotRequired[list[str | float | bool]]
    items: NotRequired[FieldType | FieldSpec]


Fields = dict[str, FieldType | FieldSpec]


@with_config(CLOSED)
class Route(TypedDict):
    to: str
    when: NotRequired[str]


# --- run data --------------------------------------------------------------------------------------


@with_config(CLOSED)
class Evidence(TypedDict):
    kind: EvidenceKind
    ref: str
    sha256: NotRequired[str]
    url: NotRequired[str]


@with_config(CLOSED)
class QuestionResult(TypedDict):
    ask: str
    kind: Literal["yes_no", "choice", "rubric"]
    answer: float | str | None
    confidence: NotRequired[float]
    result: Literal["pass", "fail", "unsure"]


@with_config(CLOSED)
class CheckResult(TypedDict):
    verdict: Literal["pass", "fail", "unsure", "error"]
    advisory: bool
    model: str
    questions: list[QuestionResult]
    truncated: NotRequired[bool]
    at: str


@with_config(CLOSED)
class StepEntry(TypedDict):
    """One completion of a step (or an earlier one, in `history`; or a held candidate)."""

    output: NotRequired[dict[str, Any]]
    evidence: NotRequired[list[Evidence]]
    summary: NotRequired[str]
    next: NotRequired[str]
    reason: NotRequired[str]
    decision: NotRequired[Literal["approved", "rejected", "failed"]]
    note: NotRequired[str]
    check: NotRequired[CheckResult]
    by: NotRequired[str]
    at: NotRequired[str]


@with_config(CLOSED)
class StepRecord(StepEntry):
    history: list[StepEntry]


@with_config(CLOSED)
class RunData(TypedDict):
    inputs: dict[str, Any]
    steps: dict[str, StepRecord]


# --- runs and work items ---------------------------------------------------------------------------


@with_config(CLOSED)
class Ended(TypedDict):
    by: str
    at: str
    note: str | None


@with_config(CLOSED)
class RunHeader(TypedDict):
    id: str
    process: str
    version: int
    mode: Mode
    state: RunState
    outcome: str | None
    ended: Ended | None
    startedBy: str
    startedAt: str
    updatedAt: str


@with_config(CLOSED)
class StepView(TypedDict):
    id: str
    kind: StepKind
    state: StepState | None
    due: NotRequired[str]
    overdue: NotRequired[bool]


@with_config(CLOSED)
class Returned(TypedDict):
    note: str
    by: str
    at: str


@with_config(CLOSED)
class Handoff(TypedDict):
    progress: NotRequired[str]
    returned: NotRequired[Returned]
    issues: NotRequired[list[str]]
    check: NotRequired[CheckResult]


@with_config(CLOSED)
class Escalation(TypedDict):
    note: str
    by: str
    at: str
    check: NotRequired[CheckResult]
    candidate: NotRequired[StepEntry]


@with_config(CLOSED)
class ToGroup(TypedDict):
    group: str


@with_config(CLOSED)
class ToPerson(TypedDict):
    person: str


@with_config(CLOSED)
class DecideArguments(TypedDict):
    runId: str
    workItemId: str
    snapshot: str
    requestId: str


@with_config(CLOSED)
class DecideCall(TypedDict):
    tool: Literal["decide"]
    arguments: DecideArguments
    decisions: list[Decision]


@with_config(CLOSED)
class WorkItem(TypedDict):
    id: str
    stepId: str
    kind: ItemKind
    text: str
    output: Fields | None
    evidence: list[EvidenceKind] | None
    next: list[Route] | None
    assignedTo: ToGroup | ToPerson
    snapshot: str
    due: str | None
    escalation: Escalation | None
    handoff: Handoff | None
    mode: NotRequired[Literal["test"]]
    decide: DecideCall


@with_config(CLOSED)
class RunView(TypedDict):
    """The result of `start_run`, `get_run`, `submit`, `escalate`, `decide` and `cancel`."""

    run: RunHeader
    data: RunData
    steps: list[StepView]
    workItems: list[WorkItem]
    body: str


# --- the other results ------------------------------------------------------------------------------


@with_config(CLOSED)
class PersonFormat(TypedDict):
    format: str


@with_config(CLOSED)
class Limits(TypedDict):
    runDataBytes: int
    checkPass: float
    checkFail: float | None
    checkConfidence: float
    checkStateBytes: int


@with_config(CLOSED)
class Described(TypedDict):
    protocol: Literal["agentprocess"]
    version: str
    profiles: list[str]
    leaseSeconds: int
    person: PersonFormat
    tools: list[str]
    maxUploadBytes: int
    limits: Limits


@with_config(CLOSED)
class Requires(TypedDict):
    systems: list[str]


@with_config(CLOSED)
class ProcessSummary(TypedDict):
    name: str
    description: str
    version: int
    inputs: Fields
    requires: NotRequired[Requires]


@with_config(CLOSED)
class ProcessPage(TypedDict):
    items: list[ProcessSummary]
    nextCursor: str | None


@with_config(CLOSED)
class ClaimArguments(TypedDict):
    runId: str
    stepId: str
    requestId: str


@with_config(CLOSED)
class ClaimCall(TypedDict):
    tool: Literal["claim"]
    arguments: ClaimArguments


@with_config(CLOSED)
class AgentWork(TypedDict):
    runId: str
    stepId: str
    process: str
    version: int
    mode: Mode
    readySince: str
    due: str | None
    overdue: bool
    handoff: Handoff | None
    claim: ClaimCall


@with_config(CLOSED)
class PersonWork(TypedDict):
    runId: str
    process: str
    version: int
    mode: Mode
    workItem: WorkItem


@with_config(CLOSED)
class WorkPage(TypedDict):
    """An agent's ready steps, or a person's work items."""

    items: list[AgentWork | PersonWork]
    nextCursor: str | None


@with_config(CLOSED)
class StepRequirements(TypedDict):
    id: str
    instructions: str
    output: Fields | None
    evidence: list[EvidenceKind] | None
    next: list[Route] | None


@with_config(CLOSED)
class Claimed(TypedDict):
    token: str
    expiresAt: str
    extensions: NotRequired[dict[str, Any]]
    mode: Mode
    step: StepRequirements
    handoff: Handoff | None
    body: str
    data: RunData


@with_config(CLOSED)
class Renewed(TypedDict):
    token: str
    expiresAt: str


@with_config(CLOSED)
class Uploaded(TypedDict):
    id: str
    sha256: str
    bytes: int


@with_config(CLOSED)
class EventSent(TypedDict):
    consumedBy: str | None


@with_config(CLOSED)
class RunSummary(TypedDict):
    id: str
    process: str
    version: int
    state: RunState
    outcome: str | None
    startedAt: str
    updatedAt: str
    inputs: dict[str, Any]


@with_config(CLOSED)
class RunPage(TypedDict):
    items: list[RunSummary]
    nextCursor: str | None


RESULTS: dict[str, Any] = {
    "describe": Described,
    "list_processes": ProcessPage,
    "start_run": RunView,
    "get_run": RunView,
    "get_work": WorkPage,
    "claim": Claimed,
    "renew": Renewed,
    "upload": Uploaded,
    "submit": RunView,
    "escalate": RunView,
    "decide": RunView,
    "cancel": RunView,
    "send_event": EventSent,
    "list_runs": RunPage,
}
"""Each tool's `data` shape."""
