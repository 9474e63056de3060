"""What a demo worker hands in for a step: output, evidence, route and summary, and how it repairs a
submission from the issues the server lists.

Agents (from a claim's `step`) and demo people (from a work item, which carries the same `output`,
`evidence` and `next` requirements) draft their work here, so both fill forms the same way. The
values come from the run's scene (world/scene.py): its inputs and earlier outputs, kept in line by the
relations file. Where the file declares a step's route conditions the route follows from the
output; elsewhere a route is chosen first and the output made to agree with it (routes.py).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from console.client.wire import EvidenceItem, Route
from demo.work.routes import Choice, as_choice, choose_route, conform, routes_on_a_verdict
from demo.world.scene import Scene, declared_route, misjudged, place_of, settle
from demo.world.values import JsonObject
from engine.clock import rfc3339
from engine.document.fields import parse_fields
from engine.document.model import Field

SUMMARY_LIMIT = 2000
LINK_BASE = "https://records.example.com"
TEST_NOTE = "Test run: caused no external effects; nothing was changed in any outside system."
_OUTPUT_ISSUE = re.compile(r"^output\.([^.:\[]+)")

Upload = Callable[[str, str, bytes], Awaitable[str | None]]
"""Stores a file and returns its upload id (None when the server refused it)."""


@dataclass(frozen=True)
class Draft:
    fields: tuple[Field, ...]
    output: JsonObject
    evidence: tuple[str, ...]
    """Evidence kinds to attach."""
    routes: tuple[Route, ...] | None
    choice: Choice | None
    scene: Scene | None = None
    """Where the values came from, so a repair or a revision keeps them in line."""
    step_id: str = ""
    pinned: frozenset[str] = frozenset()
    """Fields a cue gave their values; they stay whatever else is decided again."""

    @property
    def place(self) -> str:
        return place_of(self.step_id)

    @property
    def declared(self) -> bool:
        """Whether the relations file declares this step's route conditions."""
        return self.scene is not None and bool(self.scene.words(self.step_id).routes)

    def settled(self, output: JsonObject, fixed: Sequence[str] = ()) -> JsonObject:
        """`output` kept to the relations (fields a rule decides are decided again)."""
        if self.scene is None:
            return output
        return settle(self.fields, self.scene, self.place, output, fixed=[*fixed, *self.pinned])

    def route(self, output: JsonObject, rng: random.Random) -> Choice | None:
        """The route the output leads to where the file declares it; else the chosen one kept."""
        if not self.routes:
            return self.choice
        if self.declared:
            assert self.scene is not None
            found = declared_route(
                self.scene.words(self.step_id), self.routes, self.scene, self.place, output
            )
            if found is not None:
                return as_choice(found)
        return self.choice or choose_route(self.routes, rng)

    def without(self, name: str) -> Draft:
        return replace(self, output={k: v for k, v in self.output.items() if k != name})


@dataclass(frozen=True)
class Where:
    """Where the work happens: for links, file names and the report."""

    process: str
    run_id: str
    step_id: str
    worker: str
    mode: str


def draft(
    requirements: Mapping[str, Any],
    rng: random.Random,
    scene: Scene,
    *,
    step_id: str,
    misjudge: bool = False,
    fresh: dict[str, str] | None = None,
    pin: JsonObject | None = None,
) -> Draft:
    """Work for a step whose requirements are `{output, evidence, next}` as `claim.step` gives them
    (a `ClaimedStep`) or a work item carries them (a `WorkItem`).

    A `misjudge`d draft turns over a verdict the relations file says a first draft may get wrong
    (or, for a step the file does not describe, takes an unhappy route of a step whose routes follow
    from a boolean verdict), and the route follows: the wrong verdict a check on the step is there
    to catch. `fresh` names the fields a rework draws anew; `pin` gives values the output must
    have (a cue of the stage or a story), and the rest follows from them.
    """
    fields, _ = parse_fields(requirements.get("output") or {}, "output")
    routes = requirements.get("next")
    routes = tuple(routes) if isinstance(routes, list) and routes else None
    evidence = tuple(requirements.get("evidence") or ())
    pinned = {k: v for k, v in (pin or {}).items() if k in {f.name for f in fields}}
    work = Draft(fields, {}, evidence, routes, None, scene, step_id, frozenset(pinned))
    output = settle(fields, scene, work.place, pinned, fixed=pinned, fresh=fresh)
    if work.declared:
        turned = misjudged(fields, scene, work.place, output) if misjudge else []
        for name in turned:
            output[name] = not output[name]
        output = work.settled(output, turned)
        return replace(work, output=output, choice=work.route(output, rng))
    choice = None
    if routes is not None:
        choice = choose_route(routes, rng, unhappy=misjudge and routes_on_a_verdict(routes, fields))
        output = conform(output, fields, choice.when, rng)
    return replace(work, output=output, choice=choice)


def incomplete(work: Draft, rng: random.Random) -> tuple[Draft, str] | None:
    """The same work with one thing left out, and what; None when the step requires nothing to omit."""
    options: list[tuple[Draft, str]] = [
        (work.without(f.name), f"output.{f.name}")
        for f in work.fields
        if not f.optional and f.name in work.output
    ]
    if work.evidence:
        options.append((replace(work, evidence=()), "evidence"))
    if work.choice is not None:
        options.append((replace(work, choice=None), "next"))
    return rng.choice(options) if options else None


def repair(work: Draft, issues: Sequence[str], rng: random.Random, wanted: Sequence[str]) -> Draft:
    """`work` with every issue the server listed dealt with; `wanted` are the declared evidence kinds.

    A field named in an issue is drafted again from the run (the same facts as before), an
    undeclared one dropped.
    """
    by_name = {f.name: f for f in work.fields}
    output = dict(work.output)
    evidence = work.evidence
    choice = work.choice
    for issue in issues:
        match = _OUTPUT_ISSUE.match(issue)
        if match is not None:
            output.pop(match.group(1), None)
        elif issue.startswith("evidence"):
            evidence = tuple(dict.fromkeys((*evidence, *wanted)))
        elif issue.startswith(("next", "reason")) and work.routes:
            choice = choice or work.route(output, rng)
    if work.scene is not None:
        output = settle(work.fields, work.scene, work.place, output, fixed=work.pinned, include_optional=0.0)
    output = {k: v for k, v in output.items() if k in by_name}
    if not work.declared:
        output = conform(output, work.fields, choice.when if choice else None, rng)
    return replace(work, output=output, evidence=evidence, choice=choice)


async def evidence_items(work: Draft, where: Where, upload: Upload, now: datetime) -> list[EvidenceItem]:
    """The evidence list to submit: a generated JSON report uploaded for `file`, a record link for `link`."""
    items: list[EvidenceItem] = []
    if "file" in work.evidence:
        file_id = await upload(f"{where.step_id}-report.json", "application/json", report(work, where, now))
        if file_id is not None:
            items.append({"kind": "file", "ref": file_id})
    if "link" in work.evidence:
        items.append({"kind": "link", "ref": f"{LINK_BASE}/{where.process}/{where.run_id}/{where.step_id}"})
    return items


def report(work: Draft, where: Where, now: datetime) -> bytes:
    """The small report a worker attaches as file evidence."""
    body = {
        "process": where.process,
        "run": where.run_id,
        "step": where.step_id,
        "preparedBy": where.worker,
        "preparedAt": rfc3339(now),
        "mode": where.mode,
        "findings": work.output,
        "route": work.choice.to if work.choice else None,
    }
    return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode()


def summary(instructions: str, work: Draft, mode: str, extra: Sequence[str] = ()) -> str:
    """A few sentences in the worker's words: what was done, what came out, the route, the handoff."""
    lines = [f"Done: {first_sentence(instructions)}"]
    shown = [f"{k} = {_short(v)}" for k, v in list(work.output.items())[:3]]
    if shown:
        lines.append(f"Recorded {', '.join(shown)}.")
    if work.choice is not None:
        lines.append(work.choice.reason)
    lines.extend(extra)
    if mode == "test":
        lines.append(TEST_NOTE)
    text = " ".join(lines)
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


def sentences(instructions: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+", " ".join(instructions.split()))
    return [p for p in parts if p]


def first_sentence(instructions: str) -> str:
    found = sentences(instructions)
    return found[0] if found else "the step as instructed."


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"
