"""The rules of one step (spec §2.2): its id, its kind, which optional keys that kind takes, their values.

Every step is read even when others are broken, and each one yields the routing edges it writes, so
the graph rules (graph_rules.py) can run over whatever parts of the document are sound.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.document import fields as field_rules
from engine.document.check_rules import check_questions
from engine.document.durations import DURATION_FORM, parse_duration
from engine.document.model import (
    FIELD_TYPES,
    JOIN,
    STEP_KINDS,
    CheckQuestion,
    EvidenceKind,
    Field,
    Route,
    StepKind,
    is_evidence_kind,
)
from engine.document.wording import STEP_ID_PATTERN, Report, article, is_text, join, show

ALLOWED_KEYS: dict[str, frozenset[str]] = {
    "agent": frozenset({"output", "evidence", "next", "due", "check", "advisory"}),
    "task": frozenset({"output", "evidence", "next", "person", "due", "check", "advisory"}),
    "approve": frozenset({"next", "person", "on_reject", "due"}),
    "wait": frozenset({"next"}),
    "wait_until": frozenset({"next"}),
    "wait_for": frozenset({"next", "timeout", "on_timeout"}),
    "finish": frozenset(),
    "parallel": frozenset({"next"}),
}
OPTIONAL_KEYS = ("output", "evidence", "next", "person", "on_reject", "due", "timeout", "on_timeout", "check")
STEP_KEYS = frozenset({"id", "advisory", *STEP_KINDS, *OPTIONAL_KEYS})
APPLIES_TO = {
    "output": "agent and task steps",
    "evidence": "agent and task steps",
    "next": "every step but a finish",
    "person": "task and approve steps",
    "on_reject": "approve steps",
    "due": "agent, task and approve steps",
    "timeout": "wait_for steps",
    "on_timeout": "wait_for steps",
    "check": "agent and task steps",
    "advisory": "agent and task steps, beside check",
}
ROUTE_KEYS = ("to", "when")
INITIATOR = "initiator"
_OUTPUT_PATH = re.compile(r"steps\.([^.]+)\.output\.(.+)", re.DOTALL)


@dataclass(frozen=True)
class Edge:
    """One written or default move between steps; `path` is where an issue about it is reported."""

    source: int
    key: str
    """`next` (a single step id or a route), `default` (the following step), `on_timeout`, `on_reject`,
    or `parallel` (a branch entry)."""
    target: str
    path: str


@dataclass
class StepInfo:
    index: int
    raw: Mapping[str, Any] | None
    id: str | None
    """Set only when the id is valid and unique: only then is the step addressable by id."""
    label: str
    kind: StepKind | None = None
    written_next: bool = False
    output: tuple[Field, ...] | None = None
    evidence: tuple[EvidenceKind, ...] | None = None
    routes: tuple[Route, ...] | None = None
    check: tuple[CheckQuestion, ...] | None = None


@dataclass
class StepTable:
    """Every step as far as it could be read, plus what the graph rules need."""

    infos: list[StepInfo]
    edges: list[Edge] = field(default_factory=list)
    uses_parallel: bool = False
    unresolved: bool = False
    """Some routing value names no step: the graph as written is incomplete, so whole-graph rules that
    would only echo that gap (reachability, branch borders) are left until it is fixed."""

    @property
    def addressable(self) -> bool:
        """True when every step has a valid unique id: the graph is then well defined."""
        return all(info.id is not None for info in self.infos)

    def by_id(self) -> dict[str, StepInfo]:
        return {info.id: info for info in self.infos if info.id is not None}


def read_steps(steps: list[Any], inputs: Any, report: Report) -> StepTable:
    """Apply every per-step rule; issues go to `report`, edges and parsed parts to the table."""
    table = StepTable(infos=_identify(steps, report))
    table.uses_parallel = any(info.raw is not None and "parallel" in info.raw for info in table.infos)
    reader = _StepReader(table, inputs, report)
    for info in table.infos:
        reader.read(info)
    return table


def _identify(steps: list[Any], report: Report) -> list[StepInfo]:
    written: list[str | None] = []
    for raw in steps:
        step_id = raw.get("id") if isinstance(raw, Mapping) else None
        written.append(step_id if isinstance(step_id, str) and STEP_ID_PATTERN.fullmatch(step_id) else None)
    first_at: dict[str, int] = {}
    for i, step_id in enumerate(written):
        if step_id is not None:
            first_at.setdefault(step_id, i)
    counts = Counter(written)
    unique = {sid for sid in first_at if counts[sid] == 1}
    infos: list[StepInfo] = []
    for i, raw in enumerate(steps):
        if not isinstance(raw, Mapping):
            report.add(f"steps[{i}]", f"a step must be a mapping with an id and a kind key, not {show(raw)}")
            infos.append(StepInfo(i, None, None, f"steps[{i}]"))
            continue
        step_id = written[i]
        addressable = step_id if step_id in unique else None
        label = f"steps.{addressable}" if addressable else f"steps[{i}]"
        infos.append(StepInfo(i, raw, addressable, label))
        if "id" not in raw:
            report.add(f"{label}.id", "required: every step has an id")
        elif step_id is None:
            report.add(f"{label}.id", f"{show(raw['id'])} must match ^{STEP_ID_PATTERN.pattern}$")
        elif addressable is None and first_at[step_id] != i:
            report.add(
                f"{label}.id", f"duplicate step id {show(step_id)} (first at steps[{first_at[step_id]}])"
            )
    return infos


class _StepReader:
    def __init__(self, table: StepTable, inputs: Any, report: Report) -> None:
        self.table = table
        self.inputs = inputs
        self.report = report
        self.known_ids = {
            info.raw["id"]
            for info in table.infos
            if info.raw is not None and isinstance(info.raw.get("id"), str)
        }
        self.raw_by_id: dict[str, Mapping[str, Any]] = {}
        for info in table.infos:
            if info.raw is not None and isinstance(info.raw.get("id"), str):
                self.raw_by_id.setdefault(info.raw["id"], info.raw)

    def read(self, info: StepInfo) -> None:
        raw = info.raw
        if raw is None:
            return
        add = self.report.add
        if raw.get("id") == JOIN and self.table.uses_parallel:
            self.unresolved(
                f"{info.label}.id", "'join' is reserved by the parallel profile: it ends a branch"
            )
        for key in raw:
            if key not in STEP_KEYS:
                add(join(info.label, key), f"unknown key {show(key)} in a step")
        kinds = [kind for kind in STEP_KINDS if kind in raw]
        if not kinds:
            add(info.label, f"has no kind key: a step has exactly one of {', '.join(STEP_KINDS)}")
        elif len(kinds) > 1:
            add(info.label, f"has {len(kinds)} kind keys ({', '.join(kinds)}); a step has exactly one")
        else:
            info.kind = kinds[0]
            self.kind_value(info, raw[info.kind])
        for key in (*OPTIONAL_KEYS, "advisory"):
            if key in raw and self.allowed(info, key):
                getattr(self, f"key_{key}")(info, raw[key], f"{info.label}.{key}")
        if info.kind in ("task", "approve") and "person" not in raw:
            add(
                f"{info.label}.person",
                f"required on {article(info.kind)} step: a role name, initiator or a path",
            )

    def unresolved(self, path: str, message: str) -> None:
        self.report.add(path, message)
        self.table.unresolved = True

    def allowed(self, info: StepInfo, key: str) -> bool:
        raw = info.raw or {}
        if key == "advisory" and "check" not in raw:
            self.report.add(f"{info.label}.advisory", "allowed only beside check")
            return False
        if info.kind is None or key in ALLOWED_KEYS[info.kind]:
            return True
        self.report.add(
            f"{info.label}.{key}",
            f"not allowed on {article(info.kind)} step ({key} applies to {APPLIES_TO[key]})",
        )
        return False

    def kind_value(self, info: StepInfo, value: Any) -> None:
        path = f"{info.label}.{info.kind}"
        kind = info.kind
        if kind in ("agent", "task", "approve"):
            what = "what is approved" if kind == "approve" else "the instructions"
            if not isinstance(value, str):
                self.report.add(path, f"must say {what} as non-empty text, not {show(value)}")
            elif not is_text(value):
                # Spec §2.2 gives the value as instructions and refuses nothing about them.
                self.report.warn(path, f"is blank ({show(value)}): nobody will know what to do")
        elif kind == "wait":
            self.duration(value, path)
        elif kind == "wait_until":
            self.run_data_path(value, "datetime", path)
        elif kind == "wait_for":
            if not isinstance(value, str) or not STEP_ID_PATTERN.fullmatch(value):
                self.report.add(path, f"event name {show(value)} must match ^{STEP_ID_PATTERN.pattern}$")
        elif kind == "finish":
            if not is_text(value):
                self.report.add(path, f"must be the run's outcome, a short word, not {show(value)}")
        else:
            self.parallel_entries(info, value, path)

    def parallel_entries(self, info: StepInfo, value: Any, path: str) -> None:
        if not isinstance(value, list):
            self.unresolved(path, f"must be a list of two or more branch entry step ids, not {show(value)}")
            return
        if len(value) < 2:
            self.report.add(path, f"needs two or more branch entries, found {len(value)}")
        seen: set[str] = set()
        for i, entry in enumerate(value):
            entry_path = f"{path}[{i}]"
            if isinstance(entry, str) and entry in seen:
                self.report.add(entry_path, f"branch entry {show(entry)} is listed twice")
                continue
            if self.target(info, entry, "parallel", entry_path) and isinstance(entry, str):
                seen.add(entry)

    def duration(self, value: Any, path: str) -> None:
        if parse_duration(value) is None:
            self.report.add(path, f"{show(value)} is not a duration: {DURATION_FORM}")

    def target(self, info: StepInfo, value: Any, key: str, path: str) -> bool:
        """Record an edge to an existing step (or `join`); report anything else."""
        if not isinstance(value, str):
            self.unresolved(path, f"must be a step id, not {show(value)}")
            return False
        if value == JOIN and self.table.uses_parallel:
            if key in ("next", "on_timeout"):
                self.table.edges.append(Edge(info.index, key, JOIN, path))
                return True
            self.unresolved(path, "'join' is not a step: it ends a branch, as next or on_timeout only")
            return False
        if value not in self.known_ids:
            hint = " (join ends a branch of a parallel step; this process has none)" if value == JOIN else ""
            self.unresolved(path, f"unknown step {show(value)}{hint}")
            return False
        self.table.edges.append(Edge(info.index, key, value, path))
        return True

    def key_output(self, info: StepInfo, value: Any, path: str) -> None:
        fields, issues = field_rules.parse_fields(value, path)
        self.report.issues.extend(issues)
        info.output = fields

    def key_evidence(self, info: StepInfo, value: Any, path: str) -> None:
        if not isinstance(value, list):
            self.report.add(path, f"must be a list of evidence kinds (file, link), not {show(value)}")
            return
        kinds: list[EvidenceKind] = []
        for i, kind in enumerate(value):
            if not is_evidence_kind(kind):
                self.report.add(f"{path}[{i}]", f"{show(kind)} is not an evidence kind (file or link)")
            elif kind in kinds:
                # Spec §2.2 `evidence` lists kinds that must be attached; a repeat asks for nothing more.
                self.report.warn(f"{path}[{i}]", f"{show(kind)} is listed twice")
            else:
                kinds.append(kind)
        info.evidence = tuple(kinds)

    def key_next(self, info: StepInfo, value: Any, path: str) -> None:
        info.written_next = True
        if isinstance(value, str):
            self.target(info, value, "next", path)
            return
        if not isinstance(value, list):
            self.unresolved(path, f"must be a step id or a list of routes, not {show(value)}")
            return
        if info.kind is not None and info.kind not in ("agent", "task"):
            self.report.add(
                path,
                f"a list of routes is allowed only on agent and task steps, not on {article(info.kind)} step",
            )
        if len(value) < 2:
            self.report.add(path, f"a list of routes needs two or more, found {len(value)}")
        routes: list[Route] = []
        targets: set[str] = set()
        for i, route in enumerate(value):
            parsed = self.route(info, route, f"{path}[{i}]")
            if parsed is None:
                continue
            if parsed.to in targets:
                # Spec §2.2 `next` asks for two or more routes, not for distinct ones.
                self.report.warn(f"{path}[{i}]", f"a route to {show(parsed.to)} is listed twice")
            targets.add(parsed.to)
            routes.append(parsed)
        info.routes = tuple(routes)

    def route(self, info: StepInfo, route: Any, path: str) -> Route | None:
        if isinstance(route, str):
            return Route(route) if self.target(info, route, "next", path) else None
        if not isinstance(route, Mapping):
            self.unresolved(path, f"a route is a step id or {{to, when}}, not {show(route)}")
            return None
        for key in route:
            if key not in ROUTE_KEYS:
                self.report.add(join(path, key), f"unknown key {show(key)} in a route (to, when)")
        when = route.get("when")
        if "when" in route:
            # The shared schema types `when` as a string of minLength 1; a blank one is only warned about.
            if not isinstance(when, str) or not when:
                self.report.add(f"{path}.when", f"must say when to take the route, not {show(when)}")
            elif not is_text(when):
                self.report.warn(f"{path}.when", f"is blank ({show(when)}): say when to take the route")
        if "to" not in route:
            self.unresolved(f"{path}.to", "required: the step this route goes to")
            return None
        if not self.target(info, route["to"], "next", f"{path}.to"):
            return None
        return Route(route["to"], when if isinstance(when, str) else None)

    def key_person(self, info: StepInfo, value: Any, path: str) -> None:
        if not is_text(value):
            self.report.add(
                path, f"must be a role name, initiator or a path to a person field, not {show(value)}"
            )
        elif "." in value:
            self.run_data_path(value, "person", path)

    def key_on_reject(self, info: StepInfo, value: Any, path: str) -> None:
        self.target(info, value, "on_reject", path)

    def key_due(self, info: StepInfo, value: Any, path: str) -> None:
        self.duration(value, path)

    def key_timeout(self, info: StepInfo, value: Any, path: str) -> None:
        self.duration(value, path)

    def key_on_timeout(self, info: StepInfo, value: Any, path: str) -> None:
        if info.raw is not None and "timeout" not in info.raw:
            # Spec §2.2 gives `on_timeout` a meaning only with `timeout`, and refuses it nowhere.
            self.report.warn(path, "has no timeout beside it: without one the wait never times out")
        self.target(info, value, "on_timeout", path)

    def key_check(self, info: StepInfo, value: Any, path: str) -> None:
        info.check = check_questions(value, path, self.report)

    def key_advisory(self, info: StepInfo, value: Any, path: str) -> None:
        if not isinstance(value, bool):
            self.report.add(path, f"must be true or false, not {show(value)}")

    def run_data_path(self, value: Any, field_type: str, path: str) -> None:
        """A `person` or `wait_until` path must name a declared field of the right type (spec §2.2)."""
        form = "inputs.<field> or steps.<id>.output.<field>"
        if not isinstance(value, str):
            self.report.add(path, f"must be a path ({form}) to a {field_type} field, not {show(value)}")
            return
        if value.startswith("inputs."):
            name = value.removeprefix("inputs.")
            declared, owner = _declared_type(self.inputs, name), "inputs"
        elif match := _OUTPUT_PATH.fullmatch(value):
            step_id, name = match.groups()
            step = self.raw_by_id.get(step_id)
            if step is None:
                self.report.add(path, f"{show(value)} names unknown step {show(step_id)}")
                return
            declared, owner = _declared_type(step.get("output"), name), f"the output of step '{step_id}'"
        else:
            if field_type == "person":
                self.report.add(path, f"{show(value)} is neither a path ({form}) nor a role name (no dots)")
            else:
                self.report.add(path, f"{show(value)} is not a path: {form}")
            return
        if declared is _UNDECLARED:
            self.report.add(path, f"{show(value)} names no field declared in {owner}")
        elif isinstance(declared, str) and declared != field_type:
            self.report.add(path, f"{show(value)} is a {declared} field; it must name a {field_type} field")


_UNDECLARED = object()


def _declared_type(declarations: Any, name: str) -> object:
    """The type written for a field (`_UNDECLARED` when there is no such field).

    A declaration without a valid type gives None: its own issue is reported where it is declared.
    """
    if not isinstance(declarations, Mapping) or name not in declarations:
        return _UNDECLARED
    declaration = declarations[name]
    if isinstance(declaration, Mapping):
        declaration = declaration.get("type")
    return declaration if declaration in FIELD_TYPES else None
