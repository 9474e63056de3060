"""The check profile inside a write: what a submission's verdict does to its step (check profile §3).

The evaluator is slow network I/O (seconds a question, twice after an error). Holding the engine's
write lock and a SQLite write transaction across it would stall every other write on the server,
other runs included, for that long. So a write that reaches a check runs in two passes:

1. The handler runs as usual under the lock. Once the submission passed the objective rules and its
   step has a check, `finish` raises `CheckNeeded` with the material to judge. The dispatcher rolls
   the transaction back (nothing was written) and releases the lock.
2. The dispatcher asks the evaluator (`evaluate`), takes the lock again and runs the whole handler
   again with the verdict in `call.checked`. Every rule is checked anew against the run as it is
   now: a run that ended is `run_ended`; a claim that lapsed, was renewed or was used by another
   submission meanwhile is `stale`; a decision whose snapshot no longer matches is `stale`; a replay
   of the same requestId returns the recorded result. Only then is the verdict applied, in one
   transaction.

A verdict is keyed by the submission it was asked for (the token for `submit`, the work item and
snapshot for `decide`), so it is never applied to another. When run data elsewhere in the run
changed meanwhile (another branch of a parallel run completed), the verdict still applies: it judged
this submission, which is unchanged, and asking again could starve a step on a busy run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from engine.document.model import Step
from engine.evaluator import CheckRequest, EvaluatorError, Material, Verdict, issue_lines, run_check
from engine.evaluator.verdict import answer_text
from engine.runtime.machine import Machine
from engine.tools.acceptance import Submission
from engine.tools.arguments import DecideArgs, EvidenceItem
from engine.tools.context import Call, Checked, Context, save
from engine.tools.errors import ToolError


class CheckNeeded(Exception):
    """Raised inside a write when its submission needs a verdict the write does not have yet."""

    def __init__(self, key: tuple[str, ...], step: Step, material: Material) -> None:
        super().__init__(f"check needed for step {step.id}")
        self.key = key
        self.step = step
        self.material = material


class _NoEvaluator:
    """The evaluator of a server that has none, for runs pinned to a process with a check.

    Every question errors, so a blocking check asks for a retry and an advisory one records `error`.
    """

    model = "none"

    async def answer(self, request: CheckRequest) -> Any:
        raise EvaluatorError("no evaluator is configured")

    async def aclose(self) -> None:
        """Nothing to release."""


async def evaluate(ctx: Context, need: CheckNeeded) -> Checked:
    """Run the check outside the lock; the verdict's `at` is when the evaluator was asked."""
    evaluator = ctx.evaluator or _NoEvaluator()
    verdict = await run_check(evaluator, need.step, need.material, ctx.check_limits, ctx.clock.now())
    return Checked(need.key, verdict)


async def finish(
    call: Call,
    m: Machine,
    step: Step,
    fields: dict[str, Any],
    chosen: str | None,
    key: tuple[str, ...],
    accepted: Callable[[], None],
) -> None:
    """Complete the step with `fields`, which passed the objective rules, after its check if it has one.

    `accepted` logs the submission or decision once it is taken. The caller saves the run afterwards;
    a `fail` saves the refusal itself and raises `not_accepted`.
    """
    if not step.check:
        accepted()
        m.complete(step.id, fields, chosen)
        return
    verdict = _verdict(call, key, step, m, fields)
    wire = verdict.wire()
    effect = verdict.effect
    if effect in ("complete", "not_accepted", "escalate"):
        m.log("check_verdict", step.id, verdict=wire)
    if effect == "complete":
        accepted()
        m.complete(step.id, with_check(fields, wire), chosen)
    elif effect == "not_accepted":
        issues = issue_lines(verdict)
        m.refuse(step.id, issues, wire)
        await save(call, m, touch=False)
        raise ToolError("not_accepted", "the check did not pass", issues, keep=True)
    elif effect == "escalate":
        lines = open_lines(verdict)
        m.hold(step.id, "\n".join(lines), wire, fields, lines)
    else:
        raise ToolError("retry", "the evaluator did not answer; submit again with the same requestId")


def _verdict(call: Call, key: tuple[str, ...], step: Step, m: Machine, fields: dict[str, Any]) -> Verdict:
    if call.checked is None:
        raise CheckNeeded(key, step, material(m, fields))
    if call.checked.key != key:
        raise ToolError("stale", "the run changed while the check ran; read it again")
    return call.checked.verdict


def material(m: Machine, fields: dict[str, Any]) -> Material:
    """What the evaluator judges, from the submission's run-data record.

    Run data goes without signed file URLs: the evaluator does not open files, and a link to a
    file's bytes is not for a model provider.
    """
    return Material(
        process=m.run.process,
        body=m.process.body,
        run_data=copy.deepcopy(m.run.run_data()),
        output=fields.get("output"),
        summary=fields.get("summary"),
        evidence=tuple({"kind": e["kind"], "ref": e["ref"]} for e in fields.get("evidence", [])),
    )


def open_lines(verdict: Verdict) -> list[str]:
    """`check: <ask> → <answer>` for every question that did not pass: a person's reading list."""
    return [f"check: {q.question.ask} → {answer_text(q)}" for q in verdict.questions if q.result != "pass"]


def with_check(fields: dict[str, Any], check: dict[str, Any]) -> dict[str, Any]:
    """The step's run data with its verdict, placed before `by` and `at`."""
    out = {k: v for k, v in fields.items() if k not in ("by", "at")}
    out["check"] = check
    out.update({k: fields[k] for k in ("by", "at") if k in fields})
    return out


def person_submission(args: DecideArgs, escalation: dict[str, Any] | None) -> Submission:
    """A `completed` decision as a submission, taking the held candidate when it gives no output.

    On an item an unsure check escalated, anything else the person gives (a different route, say)
    replaces the candidate's own; a decision with `output` is the person's own submission.
    """
    candidate = (escalation or {}).get("candidate")
    if candidate is None or args.output is not None:
        return Submission(
            args.output, args.evidence, args.summary, args.next, args.reason, summary_required=False
        )
    evidence = args.evidence
    if evidence is None and "evidence" in candidate:
        evidence = [EvidenceItem(kind=e["kind"], ref=e["ref"]) for e in candidate["evidence"]]
    return Submission(
        candidate.get("output"),
        evidence,
        args.summary if args.summary is not None else candidate.get("summary"),
        args.next if args.next is not None else candidate.get("next"),
        args.reason if args.reason is not None else candidate.get("reason"),
        summary_required=False,
    )


def held_fields(fields: dict[str, Any], escalation: dict[str, Any] | None) -> dict[str, Any]:
    """The completion of an escalated step, with the unsure verdict that sent it to a person.

    A person completing an escalated step is not checked again (check profile §3); the verdict is
    kept with the completion, as pass and advisory verdicts are.
    """
    check = (escalation or {}).get("check")
    return fields if check is None else with_check(fields, check)
