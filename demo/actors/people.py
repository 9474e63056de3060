"""Demo people: members of the org who decide their work items through the engine as themselves.

They approve most approvals and reject some once with a note (so rework shows), complete tasks with
generated output and evidence, and, when the demo plays the operator too, decide escalations: most
of an agent's are returned with directions, the rest completed in the agent's place (always so for
one already returned once, or one the agent raised because a check kept refusing it). A submission
an unsure check held (`escalation.check`, `escalation.candidate`) is completed as it stands, completed
with the text fields the unsure questions name rewritten, or returned once with a note naming what
to look at again. Each item waits a think time on the demo clock first; a share wait past their
`due`, so overdue items show.

A person reads their queue (its first page) again only when it may have changed: in whole when the
engine told them of something since (`Engine.told`: new work, an escalation, an item overdue) or a
decision on it failed, else only the items that came into the page in place of those they decided.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from console.client.wire import (
    DecideArguments,
    DecideDetails,
    Decision,
    Escalation,
    GetWorkResult,
    PersonWorkEntry,
    WorkItem,
)
from console.live.paging import PAGE
from demo.actors.calls import Telling, as_person
from demo.actors.director import PLAIN_THINK_MINUTES, Director
from demo.work.draft import Where, draft, evidence_items, summary
from demo.work.revise import Context, check_lines, edited_output, named_fields
from demo.world.org import DemoOrg
from demo.world.pace import Pace
from demo.world.relations import Relations
from demo.world.scene import Scene, run_seed
from engine.document.fields import parse_fields
from engine.identity import Identity
from engine.org import OPERATORS_GROUP

REJECT_NOTES = (
    "The figures do not match the source record; check them again before I sign off.",
    "Missing detail: say which record you used and attach it.",
    "The recommendation does not follow from the findings; look again.",
)
RETURN_NOTES = (
    "Checked with the system owner: access works again; please try once more.",
    "The record exists under its legal name; search for that and continue.",
    "Use the figures in the latest export; they are the correct ones.",
)
FAIL_NOTE = "This cannot go ahead: the request is withdrawn."


@dataclass(frozen=True)
class PeopleBehaviour:
    think_minutes: tuple[float, float] = (3.0, 25.0)
    slow_share: float = 0.15
    """Items decided only after their due, so overdue items show."""
    reject_share: float = 0.3
    """Approvals rejected, once per run and step, with a note."""
    return_share: float = 0.7
    """Escalations returned with a note; the rest are completed in the agent's place."""
    fail_share: float = 0.0
    """Escalations failed, which ends the run `failed`."""
    check_return_share: float = 0.2
    """Submissions an unsure check held that are returned to the agent with a note (once per hold)."""
    check_edit_share: float = 0.3
    """Held submissions completed with the text the unsure questions name rewritten; the rest are
    completed as they stand."""
    play_operator: bool = True
    """Whether the demo also plays the operator: escalations and the items assigned to them. Off when
    a person at the console is the operator."""


@dataclass
class _Queue:
    """The first page of a person's queue as last read, and what happened to it since."""

    entries: list[PersonWorkEntry]
    told: int
    """`Engine.told` for the person before the read: a count moved since means new work."""
    more: str | None
    """Where the page ended when it was full, else None (the whole queue is in `entries`)."""
    taken: int = 0
    """Entries decided since: as many come into the page from where it ended."""
    stale: bool = False
    """A decision on an entry failed: the queue changed in a way nobody was told of."""

    def settle(self, entry: PersonWorkEntry, decided: bool) -> None:
        if decided:
            self.entries.remove(entry)
            self.taken += 1
        else:
            self.stale = True


def _entries(page: GetWorkResult) -> list[PersonWorkEntry]:
    # an agent's entry has no work item: a person is never handed one
    return [entry for entry in page["items"] if "workItem" in entry]


class DemoPeople:
    def __init__(
        self,
        engine: Telling,
        org: DemoOrg,
        pace: Pace,
        *,
        behaviour: PeopleBehaviour | None = None,
        seed: int = 0,
        relations: Relations | None = None,
        director: Director | None = None,
    ) -> None:
        self.engine = engine
        self.director = director or Director()
        self.org = org
        self.pace = pace
        self.behaviour = behaviour or PeopleBehaviour()
        self.seed = seed
        self.relations = relations or Relations()
        self.rng = random.Random(f"{seed}:people")
        self.decisions: Counter[str] = Counter()
        self._at: dict[str, datetime] = {}
        self._rejected: set[tuple[str, str]] = set()
        self._queues: dict[str, _Queue] = {}

    async def run(self, every_seconds: float = 0.5) -> None:
        while True:
            await self.poll()
            await self.pace.idle(every_seconds)

    async def poll(self) -> int:
        """One look at every person's queue; decides each item whose think time is over."""
        made = 0
        for person in self.org.people:
            if person.operator and not self.behaviour.play_operator:
                continue
            queue = await self._queue(person)
            if queue is None:
                continue
            for entry in list(queue.entries):
                item = entry["workItem"]
                if self.director.is_left(entry["runId"], item["stepId"]):
                    continue
                if self._handles(person, item) and self._ready(entry):
                    decided = await self._decide(person, entry)
                    queue.settle(entry, decided)
                    made += decided
        return made

    async def _queue(self, person: Identity) -> _Queue | None:
        """The first page of the person's queue as of now, read again where it may have changed; None
        when it cannot be read now."""
        told = self.engine.told.count(person.id)
        queue = self._queues.get(person.id)
        tools = as_person(self.engine, person)
        if queue is None or queue.told != told or queue.stale:
            found = await tools.get_work(limit=PAGE)
            if not found["ok"]:
                return None
            page = found["data"]
            queue = self._queues[person.id] = _Queue(_entries(page), told, page["nextCursor"])
        elif queue.more is not None and queue.taken:
            found = await tools.get_work(limit=queue.taken, cursor=queue.more)
            if not found["ok"]:
                del self._queues[person.id]
                return None
            queue.entries += _entries(found["data"])
            queue.more, queue.taken = found["data"]["nextCursor"], 0
        return queue

    def _handles(self, person: Identity, item: WorkItem) -> bool:
        assigned = item["assignedTo"]
        if "person" in assigned:
            return assigned["person"] == person.id
        if assigned["group"] == OPERATORS_GROUP:
            return person.operator
        return assigned["group"] in self.org.own_groups(person.id)

    def _ready(self, entry: PersonWorkEntry) -> bool:
        item = entry["workItem"]
        now = self.pace.now()
        at = self._at.get(item["id"])
        if at is None:
            cued = self.director.cued(entry["runId"]) is not None
            think = timedelta(minutes=PLAIN_THINK_MINUTES) if cued else self._think(item, now)
            at = self._at[item["id"]] = now + think
        return now >= at

    def _think(self, item: WorkItem, now: datetime) -> timedelta:
        due = item.get("due")
        if due is not None and self.rng.random() < self.behaviour.slow_share:
            late = datetime.fromisoformat(due) - now + timedelta(minutes=self.rng.uniform(2, 10))
            return max(late, timedelta(0))
        return timedelta(minutes=self.rng.uniform(*self.behaviour.think_minutes))

    async def _decide(self, person: Identity, entry: PersonWorkEntry) -> bool:
        item = entry["workItem"]
        decision, extra, label = await self._choose(person, entry)
        args: DecideArguments = {**item["decide"]["arguments"], "decision": decision, **extra}
        result = await as_person(self.engine, person).decide(args)
        if result["ok"]:
            self.decisions[label] += 1
            self._at.pop(item["id"], None)
            if decision == "rejected":
                self._rejected.add((entry["runId"], item["stepId"]))
            return True
        if result["error"]["code"] != "stale":
            self._at.pop(item["id"], None)
        return False

    async def _choose(self, person: Identity, entry: PersonWorkEntry) -> tuple[Decision, DecideDetails, str]:
        """The decision, its arguments, and the label it is counted under in `decisions`."""
        item = entry["workItem"]
        kind = item["kind"]
        b = self.behaviour
        roll = self.rng.random()
        escalation = item["escalation"]
        cued = self.director.decision(entry["runId"], item["stepId"], kind)
        if cued is not None:
            return await self._cued(person, entry, cued)
        if escalation is not None and "check" in escalation and "candidate" in escalation:
            scene = await self._scene(person, entry)
            return self._held(person, item, escalation, roll, Context(dict(scene.data), scene.body))
        if kind == "approve":
            if roll < b.reject_share and (entry["runId"], item["stepId"]) not in self._rejected:
                return "rejected", {"note": await self._reject_note(person, entry)}, "approve:rejected"
            return "approved", {}, "approve:approved"
        if kind == "agent":
            handoff = item["handoff"] or {}
            settled = (
                "returned" in handoff or "check" in handoff
            )  # sent back once, or a check the agent gave up on
            if roll < b.fail_share:
                return "failed", {"note": FAIL_NOTE}, "agent:failed"
            if roll < b.fail_share + b.return_share and not settled:
                return "returned", {"note": self.rng.choice(RETURN_NOTES)}, "agent:returned"
        return "completed", await self._completion(person, entry), f"{kind}:completed"

    async def _cued(
        self, person: Identity, entry: PersonWorkEntry, decision: Decision
    ) -> tuple[Decision, DecideDetails, str]:
        """A cued run's item decided as its cue says (a held submission completed as it stands)."""
        item = entry["workItem"]
        label = f"{item['kind']}:{decision}"
        if decision == "rejected":
            return decision, {"note": await self._reject_note(person, entry)}, label
        if decision == "returned":
            return decision, {"note": RETURN_NOTES[0]}, label
        if decision == "completed" and "candidate" not in (item["escalation"] or {}):
            return decision, await self._completion(person, entry), label
        return decision, {}, label

    def _held(
        self,
        person: Identity,
        item: WorkItem,
        escalation: Escalation,
        roll: float,
        context: Context,
    ) -> tuple[Decision, DecideDetails, str]:
        """A submission an unsure check held: return it once with a note, edit it, or take it as is."""
        b = self.behaviour
        lines = check_lines(escalation["note"].splitlines())
        candidate = escalation["candidate"]
        returned_before = "returned" in (item["handoff"] or {})
        if roll < b.check_return_share and not returned_before and lines:
            fields, _ = parse_fields(item["output"] or {}, "output")
            named = list(dict.fromkeys(f.name for line in lines for f in named_fields(line.ask, fields)))
            what = ", ".join(named) if named else "the output"
            asked = "; ".join(f"'{line.ask}' ({line.answer})" for line in lines)
            note = (
                f"The check was unsure: {asked}. Rework {what} so it answers that plainly, then submit again."
            )
            return "returned", {"note": note[:4000]}, "check:returned"
        edited = edited_output(item, candidate, lines, context)
        if roll < b.check_return_share + b.check_edit_share and edited is not None:
            output, names = edited
            extra: DecideDetails = {
                "output": output,
                "summary": f"Completed by {person.id} from the held submission, with {', '.join(names)} "
                f"rewritten after the check was unsure: {'; '.join(line.answer for line in lines)}.",
            }
            if evidence := candidate.get("evidence"):
                extra["evidence"] = [{"kind": e["kind"], "ref": e["ref"]} for e in evidence]
            if (to := candidate.get("next")) is not None:
                extra["next"] = to
            if (reason := candidate.get("reason")) is not None:
                extra["reason"] = reason
            return "completed", extra, "check:edited"
        return "completed", {}, "check:completed"

    async def _scene(self, person: Identity, entry: PersonWorkEntry) -> Scene:
        """The run as the person reads it (`get_run`), to build values from its inputs and outputs."""
        view = await as_person(self.engine, person).get_run(entry["runId"])
        data: Mapping[str, Any] = view["data"]["data"] if view["ok"] else {}
        body = view["data"]["body"] if view["ok"] else ""
        return Scene(
            entry["process"],
            run_seed(self.seed, entry["process"], data.get("inputs") or {}),
            self.pace.now(),
            data,
            body,
            self.org.person_pool,
            self.relations,
        )

    async def _reject_note(self, person: Identity, entry: PersonWorkEntry) -> str:
        """A note naming what must change: the step's own words from the relations file, if any."""
        scene = await self._scene(person, entry)
        said = scene.words(entry["workItem"]["stepId"]).reject
        return scene.render(self.rng.choice(said), self.rng) if said else self.rng.choice(REJECT_NOTES)

    async def _completion(self, person: Identity, entry: PersonWorkEntry) -> DecideDetails:
        item = entry["workItem"]
        now = self.pace.now()
        scene = await self._scene(person, entry)
        cue = self.director.cue(entry["runId"], item["stepId"])
        work = draft(item, self.rng, scene, step_id=item["stepId"], pin=cue.pin if cue is not None else None)
        where = Where(entry["process"], entry["runId"], item["stepId"], person.id, entry.get("mode", "live"))

        async def upload(file_name: str, content_type: str, content: bytes) -> str | None:
            result = await tools.upload(file_name, content_type, content)
            return result["data"]["id"] if result["ok"] else None

        tools = as_person(self.engine, person)
        extra: DecideDetails = {
            "output": work.output,
            "summary": summary(item.get("text") or "", work, where.mode),
        }
        evidence = await evidence_items(work, where, upload, now)
        if evidence:
            extra["evidence"] = evidence
        if work.choice is not None:
            extra["next"], extra["reason"] = work.choice.to, work.choice.reason
        return extra
