"""Every rule of spec §2 and of the two profiles, applied to a parsed frontmatter at once.

The validator never stops at the first problem and never raises: an author fixes a document in one
round, and a server can hand the same list to whoever published it. Only a document without a single
issue becomes a `Process`, so the runtime never meets a half-valid one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.document import fields as field_rules
from engine.document.graph_rules import check_graph
from engine.document.model import CHECK_PROFILE, PARALLEL_PROFILE, Field, Issue, Process, Step
from engine.document.step_rules import StepInfo, StepTable, read_steps
from engine.document.wording import NAME_MAX, NAME_PATTERN, Report, is_text, join, show

FRONTMATTER_KEYS = ("name", "description", "inputs", "requires", "steps")
REQUIRES_KEYS = ("systems",)
_NAME_RULE = f"^{NAME_PATTERN.pattern}$"


@dataclass(frozen=True)
class Validated:
    process: Process | None
    """Built only when there are no issues."""
    issues: tuple[Issue, ...]
    profiles: frozenset[str]
    """Profiles the document's keys need, reported even when it has issues."""
    warnings: tuple[Issue, ...] = ()
    """What the author should look at; never a reason to refuse (see `wording.Report`)."""

    @property
    def ok(self) -> bool:
        return not self.issues


def needed_profiles(frontmatter: Any) -> frozenset[str]:
    """A process uses a profile by using its keys (spec §8): `parallel:` or `check:` on any step."""
    steps = frontmatter.get("steps") if isinstance(frontmatter, Mapping) else None
    if not isinstance(steps, list):
        return frozenset()
    keys = {key for step in steps if isinstance(step, Mapping) for key in step}
    needed = {PARALLEL_PROFILE} if "parallel" in keys else set()
    if "check" in keys:
        needed.add(CHECK_PROFILE)
    return frozenset(needed)


def validate(frontmatter: Any, body: str, folder: str | None = None) -> Validated:
    """All issues of a parsed document; `folder` is the name of the folder it came in, if any."""
    report = Report()
    if not isinstance(frontmatter, Mapping):
        report.add("", f"frontmatter must be a mapping, not {show(frontmatter)}")
        return Validated(None, tuple(report.issues), frozenset())
    _body(body, report)
    for key in frontmatter:
        if key not in FRONTMATTER_KEYS:
            report.add(
                join("", key), f"unknown key {show(key)}: the frontmatter has {', '.join(FRONTMATTER_KEYS)}"
            )
    _name(frontmatter, folder, report)
    _description(frontmatter, report)
    inputs: tuple[Field, ...] = ()
    if "inputs" in frontmatter:
        inputs, field_issues = field_rules.parse_fields(frontmatter["inputs"], "inputs")
        report.issues.extend(field_issues)
    systems = _requires(frontmatter, report)
    table = _steps(frontmatter, report)
    if table is not None:
        check_graph(table, report)
    issues = tuple(dict.fromkeys(report.issues))
    warnings = tuple(dict.fromkeys(report.warnings))
    profiles = needed_profiles(frontmatter)
    if issues or table is None:
        return Validated(None, issues, profiles, warnings)
    process = Process(
        name=frontmatter["name"],
        description=frontmatter["description"],
        inputs=inputs,
        steps=tuple(_step(info, table) for info in table.infos),
        body=body,
        frontmatter=dict(frontmatter),
        requires_systems=systems,
        profiles=profiles,
    )
    return Validated(process, (), profiles, warnings)


def _body(body: Any, report: Report) -> None:
    """The hash covers the body's UTF-8 bytes (spec §6 rule 5), so it must have some."""
    if not isinstance(body, str):
        report.add("body", f"must be text, not {show(body)}")
        return
    try:
        body.encode("utf-8")
    except UnicodeEncodeError as exc:
        report.add("body", f"character {exc.start} is half a surrogate pair: the body must be UTF-8 text")


def _name(frontmatter: Mapping[str, Any], folder: str | None, report: Report) -> None:
    if "name" not in frontmatter:
        report.add("name", "required: the process name, such as supplier-onboarding")
        return
    name = frontmatter["name"]
    if not isinstance(name, str):
        report.add("name", f"must be text matching {_NAME_RULE}, not {show(name)}")
        return
    if not 1 <= len(name) <= NAME_MAX:
        report.add("name", f"{show(name)} has {len(name)} characters; a name has 1 to {NAME_MAX}")
    elif not NAME_PATTERN.fullmatch(name):
        report.add("name", f"{show(name)} must match {_NAME_RULE}")
    if folder is not None and name != folder:
        report.add("name", f"{show(name)} differs from its folder name {show(folder)}; they must be equal")


def _description(frontmatter: Mapping[str, Any], report: Report) -> None:
    if "description" not in frontmatter:
        report.add("description", "required: what the process does and when to start it")
        return
    description = frontmatter["description"]
    # The shared schema (process-document.json) types `description` as a string of minLength 1;
    # a blank one is a string the spec does not refuse, so it is only warned about.
    if not isinstance(description, str) or not description:
        report.add("description", f"must be non-empty text, not {show(description)}")
    elif not is_text(description):
        report.warn(
            "description", f"is blank ({show(description)}): say what the process does and when to start it"
        )


def _requires(frontmatter: Mapping[str, Any], report: Report) -> tuple[str, ...] | None:
    """Revision 10: the external systems the work needs, shown wherever the process is offered."""
    if "requires" not in frontmatter:
        return None
    requires = frontmatter["requires"]
    if not isinstance(requires, Mapping):
        report.add("requires", f"must be a mapping with systems, not {show(requires)}")
        return None
    for key in requires:
        if key not in REQUIRES_KEYS:
            report.add(join("requires", key), f"unknown key {show(key)}: requires has only systems")
    if "systems" not in requires:
        report.add("requires.systems", "required: the list of external systems the work needs")
        return None
    systems = requires["systems"]
    if not isinstance(systems, list) or not systems:
        report.add("requires.systems", f"must be a non-empty list of system names, not {show(systems)}")
        return None
    seen: dict[str, None] = {}
    for i, system in enumerate(systems):
        path = f"requires.systems[{i}]"
        if not isinstance(system, str) or not NAME_PATTERN.fullmatch(system) or len(system) > NAME_MAX:
            report.add(path, f"{show(system)} must match {_NAME_RULE} with at most {NAME_MAX} characters")
        elif system in seen:
            # Spec §2.1 `requires`: "Names match the `name` pattern and are listed once each."
            report.add(path, f"{show(system)} is listed twice")
        else:
            seen[system] = None
    return tuple(seen)


def _steps(frontmatter: Mapping[str, Any], report: Report) -> StepTable | None:
    if "steps" not in frontmatter:
        report.add("steps", "required: the ordered list of steps")
        return None
    steps = frontmatter["steps"]
    if not isinstance(steps, list):
        report.add("steps", f"must be a list of steps, not {show(steps)}")
        return None
    if not steps:
        report.add("steps", "needs at least one step")
        return None
    return read_steps(steps, frontmatter.get("inputs"), report)


def _step(info: StepInfo, table: StepTable) -> Step:
    """The typed step of a valid document: every key is known to be well formed here."""
    raw = info.raw
    assert raw is not None and info.id is not None and info.kind is not None
    kind = info.kind
    value = tuple(raw[kind]) if kind == "parallel" else raw[kind]
    written = raw.get("next")
    if kind == "finish" or isinstance(written, list):
        successor = None
    elif isinstance(written, str):
        successor = written
    else:
        successor = table.infos[info.index + 1].id
    return Step(
        id=info.id,
        kind=kind,
        value=value,
        output=info.output if "output" in raw else None,
        evidence=info.evidence if "evidence" in raw else None,
        next=successor,
        routes=info.routes if isinstance(written, list) else None,
        person=raw.get("person"),
        on_reject=raw.get("on_reject"),
        due=raw.get("due"),
        timeout=raw.get("timeout"),
        on_timeout=raw.get("on_timeout"),
        check=info.check,
        advisory=raw.get("advisory", False),
    )
