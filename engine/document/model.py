"""Typed objects for a valid PROCESS.md, so the runtime never reads raw dicts.

Objects are built only from a document that passed validation; the validator
owns every rule, these classes only carry what it accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, get_args

FieldType = Literal["string", "number", "boolean", "date", "datetime", "list", "object", "person"]
FIELD_TYPES: tuple[FieldType, ...] = get_args(FieldType)

StepKind = Literal["agent", "task", "approve", "wait", "wait_until", "wait_for", "finish", "parallel"]
STEP_KINDS: tuple[StepKind, ...] = get_args(StepKind)

EvidenceKind = Literal["file", "link"]
EVIDENCE_KINDS: tuple[EvidenceKind, ...] = get_args(EvidenceKind)


def is_field_type(value: object) -> TypeGuard[FieldType]:
    return value in FIELD_TYPES


def is_step_kind(value: object) -> TypeGuard[StepKind]:
    return value in STEP_KINDS


def is_evidence_kind(value: object) -> TypeGuard[EvidenceKind]:
    return value in EVIDENCE_KINDS


QuestionKind = Literal["yes_no", "choice", "rubric"]

JOIN = "join"
"""Reserved `next` value inside a parallel branch (parallel profile §2)."""

PARALLEL_PROFILE = "parallel-1"
CHECK_PROFILE = "check-1"


@dataclass(frozen=True)
class Issue:
    """One problem with a document or a value: where, and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True)
class Field:
    """A declared input or output field (spec §2.3)."""

    name: str
    type: FieldType
    description: str | None = None
    optional: bool = False
    one_of: tuple[Any, ...] | None = None
    items: Field | None = None
    declared: Any = None
    """The declaration exactly as written (a type name or a mapping): the wire form for `claim.step.output`."""


@dataclass(frozen=True)
class Route:
    to: str
    when: str | None = None

    def wire(self) -> dict[str, str]:
        return {"to": self.to} if self.when is None else {"to": self.to, "when": self.when}


@dataclass(frozen=True)
class CheckQuestion:
    """One question of a `check` key (check profile §2). Thresholds not written stay None."""

    ask: str
    kind: QuestionKind
    pass_at: float | None = None
    """yes_no: yes-probability at or above which it passes (None: server default)."""
    fail_below: float | None = None
    """yes_no: below it the answer fails; between it and pass_at it is unsure."""
    choices: tuple[tuple[str, str], ...] = ()
    """choice: (answer name, description) in written order."""
    pass_choices: tuple[str, ...] = ()
    unsure_choices: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    """rubric: level descriptions, worst first."""
    pass_level: int | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class Step:
    id: str
    kind: StepKind
    value: Any
    """The kind key's value: instructions (agent, task, approve), a duration (wait), a path (wait_until),
    an event name (wait_for), an outcome (finish), or a tuple of branch entry ids (parallel)."""
    output: tuple[Field, ...] | None = None
    evidence: tuple[EvidenceKind, ...] | None = None
    next: str | None = None
    """The single successor: written, or the following step by default; `join` inside a branch;
    None for a finish or when `routes` is set."""
    routes: tuple[Route, ...] | None = None
    """Set when `next` is a list: the actor chooses one (spec §3.2)."""
    person: str | None = None
    on_reject: str | None = None
    due: str | None = None
    timeout: str | None = None
    on_timeout: str | None = None
    check: tuple[CheckQuestion, ...] | None = None
    advisory: bool = False

    @property
    def instructions(self) -> str | None:
        return self.value if self.kind in ("agent", "task", "approve") else None

    @property
    def branches(self) -> tuple[str, ...]:
        return self.value if self.kind == "parallel" else ()

    @property
    def successors(self) -> tuple[str, ...]:
        """Every step id this step may move to by `next` (not `on_reject` or `on_timeout`)."""
        if self.routes is not None:
            return tuple(r.to for r in self.routes)
        return (self.next,) if self.next is not None else ()

    def output_wire(self) -> dict[str, Any] | None:
        """The output requirements as `claim.step.output` gives them."""
        return None if self.output is None else {f.name: f.declared for f in self.output}

    def routes_wire(self) -> list[dict[str, str]] | None:
        return None if self.routes is None else [r.wire() for r in self.routes]


@dataclass(frozen=True)
class Process:
    name: str
    description: str
    inputs: tuple[Field, ...]
    steps: tuple[Step, ...]
    body: str
    frontmatter: dict[str, Any]
    """The parsed frontmatter as plain JSON values (what the content hash covers)."""
    requires_systems: tuple[str, ...] | None = None
    profiles: frozenset[str] = field(default_factory=frozenset)
    """Profiles the document needs: `parallel-1`, `check-1`."""

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def index(self, step_id: str) -> int:
        for i, s in enumerate(self.steps):
            if s.id == step_id:
                return i
        raise KeyError(step_id)

    @property
    def roles(self) -> tuple[str, ...]:
        """Role names used in `person:` (not `initiator`, not paths), each once, in step order."""
        seen: dict[str, None] = {}
        for s in self.steps:
            if s.person and s.person != "initiator" and "." not in s.person:
                seen.setdefault(s.person)
        return tuple(seen)

    def branch_of(self, step_id: str) -> str | None:
        """The id of the parallel step whose branch holds this step, or None outside any branch."""
        for s in self.steps:
            if s.kind == "parallel":
                for entry in s.branches:
                    if step_id in self.branch_steps(entry):
                        return s.id
        return None

    def branch_steps(self, entry: str) -> tuple[str, ...]:
        """The branch starting at `entry`: every step reachable by `next`/`on_timeout`, up to `join`."""
        seen: list[str] = []
        todo = [entry]
        while todo:
            sid = todo.pop(0)
            if sid == JOIN or sid in seen:
                continue
            seen.append(sid)
            step = self.step(sid)
            todo.extend(step.successors)
            if step.on_timeout:
                todo.append(step.on_timeout)
        return tuple(seen)

    def inputs_wire(self) -> dict[str, Any]:
        return {f.name: f.declared for f in self.inputs}
