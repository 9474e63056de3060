"""A demo agent: an independent worker that reaches the server over MCP with its own token and works
the loop of guides/adding-support.md (get_work, claim, read the handoff, work, renew, upload, submit,
escalate), with seeded, configurable habits that make a demo show every path of the protocol.

Its habits: some submissions escalate with a note, some first hand in something incomplete and fix it
from the `not_accepted` issues, some let the lease lapse after leaving progress (and, with an
incomplete submission first, issues) for the next claimant. The next claimant reads that handoff and
acts on it. Some first drafts misjudge their verdict; where a model check catches that (`check:`
lines in the refusal or the handoff), the agent reconsiders the fields each question is about
(work/revise.py), says so in its summary, and escalates when the check still refuses after `max_fixes`.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from console.client.wire import AgentWorkEntry, ClaimedStep, ClaimResult, DescribeResult, RenewResult, RunView
from demo.actors.calls import DemoCalls
from demo.actors.control import AgentState, DemoControl
from demo.actors.director import Director
from demo.actors.link import AgentLink, LinkError
from demo.work.draft import Draft, Where, evidence_items, incomplete, repair, sentences, summary
from demo.work.draft import draft as draft_work
from demo.work.handoff import Handoff
from demo.work.revise import CheckLine, Context, check_lines, revise
from demo.work.rework import Rework
from demo.world.pace import Pace
from demo.world.relations import Relations
from demo.world.scene import Scene, run_seed
from engine.identity import Identity

RETRY_ATTEMPTS = 3
BLOCKERS = (
    "the source system timed out on every attempt",
    "the record named in the inputs could not be found",
    "the inputs contradict each other and I cannot tell which one is right",
    "my credentials do not reach the record this step needs",
)


@dataclass(frozen=True)
class AgentBehaviour:
    work_minutes: tuple[float, float] = (1.0, 4.0)
    """Demo-clock minutes one step takes at speed 1."""
    parts: int = 3
    """Work is done in parts; between parts the agent may renew and leave progress."""
    long_work_minutes: float = 3.0
    """Work at least this long renews between parts with a progress note."""
    escalate_share: float = 0.1
    incomplete_share: float = 0.15
    lapse_share: float = 0.05
    idle_seconds: float = 1.0
    """Real seconds between polls of get_work when nothing is ready."""
    reconnect_seconds: float = 2.0
    max_fixes: int = 2
    """Resubmissions after a refusal (the server's rules or a check) before the agent escalates."""
    misjudge_share: float = 0.35
    """First drafts of a step whose routes follow from a boolean verdict that take an unhappy route
    the facts do not support (a wrong verdict): what a check on the step is there to catch."""
    processes: tuple[str, ...] = ()
    """Only these processes; empty for all."""


class AgentStopped(Exception):
    """The demo is shutting down: no new call starts, so none is cut off half-way."""


class DemoAgent:
    def __init__(
        self,
        name: str,
        link: Callable[[], AgentLink],
        pace: Pace,
        *,
        behaviour: AgentBehaviour | None = None,
        seed: int = 0,
        control: DemoControl | None = None,
        people: Sequence[str] = (),
        relations: Relations | None = None,
        director: Director | None = None,
        identity: str = "",
    ) -> None:
        self.name = name
        self.director = director or Director()
        self.seed = seed
        self.relations = relations or Relations()
        self._new_link = link
        self.pace = pace
        self.behaviour = behaviour or AgentBehaviour()
        self.rng = random.Random(f"{seed}:{name}")
        self.control = control or DemoControl()
        self.state = AgentState(name, identity=identity or name)
        self.control.add(self.state)
        self.people = tuple(people)
        self.link: AgentLink | None = None
        self.last_summary: str | None = None
        self.last_handoff: Handoff | None = None
        self.in_call = False
        self._stopping = False
        self.server: DescribeResult | None = None
        """The `describe` result of the server this agent is connected to."""
        self.tools = DemoCalls(Identity("agent", self.state.identity), self._send)

    # --- the loop ------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Start no new call; `run` returns once the call in flight (if any) has its answer."""
        self._stopping = True

    async def run(self) -> None:
        """Work until stopped or cancelled, reconnecting after link errors."""
        try:
            while True:
                try:
                    await self.connect()
                    while True:
                        await self.control.wait_running(self.name)
                        if not await self.work_once():
                            await self.pace.idle(self.behaviour.idle_seconds)
                except LinkError as exc:
                    self.state.act(f"link error: {exc}", status="error")
                    self.state.hold(None)
                    await self.disconnect()
                    await self.pace.idle(self.behaviour.reconnect_seconds)
        except AgentStopped:
            return
        finally:
            self.state.act("stopped", status="stopped")
            with contextlib.suppress(Exception):
                await self.disconnect()

    async def connect(self) -> None:
        """Open the link and call `describe` once, as the loop begins (guides/adding-support.md step 1)."""
        if self.link is None:
            self.link = await self._new_link().open()
            described = await DemoCalls(self.tools.identity, self.link.call).describe()
            if not described["ok"]:
                raise LinkError(f"describe refused: {described['error']['code']}")
            server = self.server = described["data"]
            self.state.act(f"connected ({server['version']}, lease {server['leaseSeconds']}s)", status="idle")

    async def disconnect(self) -> None:
        link, self.link = self.link, None
        if link is not None:
            await link.close()

    async def work_once(self) -> bool:
        """Look for work and do one step of it; False when nothing could be claimed."""
        only = self.behaviour.processes[0] if len(self.behaviour.processes) == 1 else None
        found = await self.tools.get_work(limit=10, process=only)
        if not found["ok"]:
            self.state.act(f"get_work refused: {found['error']['code']}", status="idle")
            return False
        for item in found["data"]["items"]:
            if "workItem" in item:
                continue  # a person's entry: an agent is never handed one
            if self.behaviour.processes and item["process"] not in self.behaviour.processes:
                continue
            if not self.director.may_claim(self.name, item["runId"], item["stepId"]):
                continue
            claimed = await self.tools.claim(item["runId"], item["stepId"])
            if claimed["ok"]:
                await self._work(item, claimed["data"])
                return True
        if self.state.status != "idle":
            self.state.act("waiting for work", status="idle")
        return False

    # --- one step --------------------------------------------------------------------------------------

    async def _work(self, item: AgentWorkEntry, claim: ClaimResult) -> None:
        step = claim["step"]
        data = claim["data"]
        job = _Job(
            step=step,
            where=Where(item["process"], item["runId"], step["id"], self.name, claim["mode"]),
            handoff=Handoff.read(claim.get("handoff")),
            lease=_Lease(claim["token"], parse_stamp_wire(claim["expiresAt"])),
            context=Context(data, claim.get("body") or ""),
            scene=Scene(
                item["process"],
                run_seed(self.seed, item["process"], data["inputs"]),
                self.pace.now(),
                data,
                claim.get("body") or "",
                self.people,
                self.relations,
            ),
            rework=Rework.read(step["id"], data, step["output"]),
        )
        self.state.claimed += 1
        self.state.hold(f"{job.where.process} · {job.where.step_id}", job.where.run_id)
        self.last_handoff = job.handoff
        self.state.act(_claimed_text(job.where, job.handoff), status="working")
        try:
            await self._do(job)
        finally:
            self.state.hold(None)

    async def _do(self, job: _Job) -> None:
        b = self.behaviour
        step, handoff, lease = job.step, job.handoff, job.lease
        fate, misjudge = self._fate(job)
        fresh = job.rework.fresh if job.rework is not None else None
        cue = self.director.cue(job.where.run_id, step["id"])
        pin = cue.pin if cue is not None else None
        work = draft_work(
            step, self.rng, job.scene, step_id=step["id"], misjudge=misjudge, fresh=fresh, pin=pin
        )
        if job.rework is not None:
            job.revisions.append(job.rework.sentence(work.output))
        if handoff.other_issues:
            wanted = step.get("evidence") or ()
            work = repair(work, handoff.other_issues, self.rng, wanted)
        if handoff.check_lines:
            revision = revise(work, handoff.check_lines, self.rng, job.context, turn_over=False)
            job.revisions.append(revision.sentence())
            work = revision.work
        steps_said = sentences(step.get("instructions") or "")
        total = self.rng.uniform(*b.work_minutes) * 60
        start = handoff.parts_done(b.parts)
        for part in range(start, b.parts):
            await self.control.wait_running(self.name)
            seconds = total / b.parts
            await self.pace.wait(seconds)
            progress = _progress(part + 1, b.parts, steps_said)
            if fate == "lapse":
                await self._lapse(job, work, progress)
                return
            if fate == "escalate" and part + 1 >= max(1, b.parts // 2):
                await self._escalate(job, steps_said[: part + 1])
                return
            last = part + 1 == b.parts
            short = (lease.expires - self.pace.now()).total_seconds() < seconds * 1.5
            if not last and (total >= b.long_work_minutes * 60 or short):
                renewed = await self.tools.renew(lease.token, progress)
                if not renewed["ok"]:
                    self.state.act(f"renew refused ({renewed['error']['code']}); moving on")
                    return
                lease.renew(renewed["data"])
                self.state.act(f"renewed with progress: {progress[:60]}")
        if fate == "incomplete" and (broken := incomplete(work, self.rng)) is not None:
            await self._submit(job, broken[0])
        else:
            await self._submit(job, work)

    def _fate(self, job: _Job) -> tuple[str, bool]:
        """normal, escalate, lapse or incomplete, and whether the first draft misjudges its verdict.

        An interrupted or returned step is always finished, and judged with care. A cued run's step
        does what its cue says (director.py), not what the agent's habits would.
        """
        b = self.behaviour
        handoff = job.handoff
        roll = self.rng.random()
        incomplete_roll = self.rng.random()
        misjudge_roll = self.rng.random()
        if handoff.resumed or handoff.returned_note is not None:
            return "normal", False
        cued = self.director.fate(job.where.run_id, job.where.step_id)
        if cued is not None:
            return ("normal", True) if cued == "misjudge" else (cued, False)
        misjudge = misjudge_roll < b.misjudge_share
        if roll < b.escalate_share:
            return "escalate", misjudge
        if roll < b.escalate_share + b.lapse_share:
            return "lapse", misjudge
        return ("incomplete" if incomplete_roll < b.incomplete_share else "normal"), misjudge

    async def _submit(self, job: _Job, work: Draft) -> None:
        """Submit; after a refusal, fix what the issues name and reconsider what each check question
        is about, and escalate once `max_fixes` resubmissions were refused too.
        """
        step, where = job.step, job.where
        tries = self.behaviour.max_fixes + 1
        for attempt in range(1, tries + 1):
            extra = job.handoff.acknowledgements() + job.revisions
            if job.fixed:
                extra.append(f"Fixed after the server refused the first submission: {'; '.join(job.fixed)}.")
            text = summary(step.get("instructions") or "", work, where.mode, extra)
            evidence = await evidence_items(work, where, self._upload, self.pace.now()) or None
            choice = work.choice
            result = await self.tools.submit(
                job.lease.token,
                work.output,
                text,
                evidence=evidence,
                next=choice.to if choice is not None else None,
                reason=choice.reason if choice is not None else None,
            )
            if result["ok"]:
                self._submitted(job, work, result["data"], text)
                return
            error = result["error"]
            if error["code"] != "not_accepted":
                self.state.act(f"submit refused ({error['code']}): {error['message']}", status="idle")
                return
            work = self._refused(job, work, list(error.get("issues") or []), again=attempt < tries)
        if job.check_refusal:
            asked = "; ".join(f"{line.answer} to '{line.ask.rstrip('.')}'" for line in job.check_refusal)
            await self._escalate(
                job,
                [f"Reconsidered the output {job.reconsidered} times from the check's questions."],
                blocker=f"the model check still answers {asked}",
            )
        else:
            await self._escalate(job, [f"The server kept refusing the submission: {'; '.join(job.fixed)}."])

    def _refused(self, job: _Job, work: Draft, issues: list[str], *, again: bool) -> Draft:
        """Note a `not_accepted`; with another try to come, the work with every issue dealt with."""
        lines = check_lines(issues)
        others = [issue for issue in issues if CheckLine.parse(issue) is None]
        self.state.refused += 1
        then = "fixing" if again else "giving up"
        if others:
            self.state.act(f"not accepted: {'; '.join(others)[:80]}; {then}")
            job.fixed.extend(others)
        if lines:
            self.state.check_refused += 1
            self.state.act(f"check refused: {'; '.join(line.answer for line in lines)}; {then}")
            job.check_refusal = lines
        if not again:
            return work
        if others:
            wanted = job.step.get("evidence") or ()
            work = repair(work, others, self.rng, wanted)
        if lines:
            revision = revise(work, lines, self.rng, job.context, turn_over=True)
            job.revisions.append(revision.sentence())
            job.reconsidered += 1
            work = revision.work
        return work

    def _submitted(self, job: _Job, work: Draft, view: RunView, text: str) -> None:
        self.last_summary = text
        self.state.submitted += 1
        if job.check_refusal:
            self.state.check_fixed += 1
        route = f" → {work.choice.to}" if work.choice else ""
        step_id = job.where.step_id
        if _held(view, step_id):
            self.state.held += 1
            self.state.act(
                f"submitted {step_id}{route}; the check is unsure: held for a person", status="idle"
            )
        else:
            self.state.act(f"submitted {step_id}{route}", status="idle")

    async def _lapse(self, job: _Job, work: Draft, progress: str) -> None:
        """Leave progress (and, sometimes, a refused submission's issues) and stop answering."""
        renewed = await self.tools.renew(job.lease.token, progress)
        if renewed["ok"]:
            job.lease.renew(renewed["data"])
        if self.rng.random() < self.behaviour.incomplete_share and (broken := incomplete(work, self.rng)):
            await self.tools.submit(job.lease.token, broken[0].output, "Partial work.")
        self.state.lapsed += 1
        self.director.lapsed(self.name, job.where.run_id, job.where.step_id)
        self.state.act(f"stopped answering on {job.where.step_id}; the lease will lapse", status="idle")

    async def _escalate(self, job: _Job, tried: Sequence[str], blocker: str | None = None) -> None:
        if blocker is None:
            said = job.scene.words(job.where.step_id).escalate
            blocker = job.scene.render(self.rng.choice(said), self.rng) if said else self.rng.choice(BLOCKERS)
        done = " ".join(tried) if tried else "Nothing yet."
        note = (
            f"Cannot finish {job.where.step_id}: {blocker}. What I did: {done} "
            "A person needs to check the record and either return the step with directions or complete it."
        )
        if job.where.mode == "test":
            note += " (Test run: no external effects.)"
        result = await self.tools.escalate(job.lease.token, note[:4000])
        if result["ok"]:
            self.state.escalated += 1
            self.state.act(f"escalated {job.where.step_id}: {blocker}"[:160], status="idle")
        else:
            self.state.act(f"escalate refused ({result['error']['code']})", status="idle")

    # --- calls -----------------------------------------------------------------------------------------

    async def _upload(self, file_name: str, content_type: str, content: bytes) -> str | None:
        if self.server is None or "upload" not in self.server["tools"]:
            self.state.act("this server offers no upload; cannot attach a file")
            return None
        result = await self.tools.upload(file_name, content_type, content)
        if not result["ok"]:
            self.state.act(f"upload refused ({result['error']['code']})")
            return None
        self.state.act(f"uploaded {file_name} ({result['data']['bytes']} bytes)")
        return result["data"]["id"]

    async def _call(self, tool: str, arguments: dict[str, object]) -> dict[str, Any]:
        if self._stopping:
            raise AgentStopped
        if self.link is None:
            await self.connect()
        assert self.link is not None
        await self.control.wait_running(self.name)
        self.in_call = True
        try:
            result = await self.link.call(tool, arguments)
        finally:
            self.in_call = False
        answer = "ok" if result.get("ok") else str((result.get("error") or {}).get("code", "error"))
        what = arguments.get("stepId") or (self.state.holding or "").split(" · ")[-1]
        stamp = self.pace.now().strftime("%H:%M:%S")
        self.state.called(f"{stamp} {tool}{f' {what}' if what and tool != 'get_work' else ''} → {answer}")
        return result

    async def _send(self, tool: str, arguments: dict[str, object]) -> object:
        """One call for `self.tools`; a write (it carries its requestId) is repeated with the same
        requestId while the server says `retry`."""
        result = await self._call(tool, arguments)
        for _ in range(RETRY_ATTEMPTS if "requestId" in arguments else 0):
            if result["ok"] or result["error"]["code"] != "retry":
                break
            await self.pace.idle(0.2)
            result = await self._call(tool, arguments)
        return result


@dataclass
class _Job:
    """One claimed step: what the claim gave, and what this attempt has revised so far."""

    step: ClaimedStep
    where: Where
    handoff: Handoff
    lease: _Lease
    context: Context
    scene: Scene
    rework: Rework | None = None
    revisions: list[str] = field(default_factory=list)
    """A sentence per check revision, for the summary."""
    fixed: list[str] = field(default_factory=list)
    """Issues of refused submissions, other than a check's, that later ones fixed."""
    check_refusal: list[CheckLine] = field(default_factory=list)
    """The questions of the latest refusal by a check, if one refused this attempt."""
    reconsidered: int = 0
    """Resubmissions this attempt revised from a check's refusal."""


def _held(view: RunView, step_id: str) -> bool:
    """Whether the run view shows `step_id` escalated with a held candidate (an unsure check)."""
    return any(
        item["stepId"] == step_id and "candidate" in (item["escalation"] or {}) for item in view["workItems"]
    )


class _Lease:
    def __init__(self, token: str, expires: datetime) -> None:
        self.token = token
        self.expires = expires

    def renew(self, data: RenewResult) -> None:
        self.token = data["token"]
        self.expires = parse_stamp_wire(data["expiresAt"])


def parse_stamp_wire(text: str) -> datetime:
    """A wire timestamp (`2026-10-06T09:10:00Z`) as an aware datetime."""
    return datetime.fromisoformat(text)


def _progress(done: int, parts: int, said: Sequence[str]) -> str:
    covered = " ".join(said[:done]) if said else "the first checks"
    return f"Done {done} of {parts} parts: {covered}"[:4000]


def _claimed_text(where: Where, handoff: Handoff) -> str:
    text = f"claimed {where.process} · {where.step_id}"
    if not handoff.empty:
        read = [
            name
            for name, present in (
                ("progress", handoff.progress is not None),
                ("issues", bool(handoff.issues)),
                ("returned note", handoff.returned_note is not None),
                ("check", handoff.check_verdict is not None),
            )
            if present
        ]
        text += f" (handoff: {', '.join(read)})"
    return text
