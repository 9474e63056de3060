"""The check profile, its observable parts: verdict shapes, refusals, unsure escalations, advisory
checks and checked tasks (profiles/check.md §2, §3).

conform-check asks for a word. `alpha` is right, `beta` is wrong, and `gamma` is neither, which its
choice question marks unsure; a competent model answers these the same way every time, and the
scripted evaluator `--print-setup` writes for our server does so by definition.
"""

from __future__ import annotations

from typing import Any

from conform.expect import equal, fail, true
from conform.registry import check
from conform.session import Session, states, work_item

YES_NO = "The output word is alpha."
CHOICE = "Which word is in the output?"
RUBRIC = "How well does the output follow the instructions?"
WRONG_LEVEL = "The output word is not alpha."


def _verdict(
    what: str, verdict: Any, expected: str, advisory: bool, kinds: list[tuple[str, str, str]]
) -> None:
    """A verdict's shape: its result, advisory flag, model, and each question's ask, kind and result."""
    if not isinstance(verdict, dict):
        fail(f"{what}: expected a verdict, got {verdict!r}")
    equal(f"{what}: verdict and advisory", (verdict["verdict"], verdict["advisory"]), (expected, advisory))
    true(bool(verdict["model"].strip()), f"{what}: model: expected what answered, got a blank")
    equal(f"{what}: questions", [(q["ask"], q["kind"], q["result"]) for q in verdict["questions"]], kinds)
    for question in verdict["questions"]:
        answer = question["answer"]
        if question["kind"] == "yes_no":
            true(
                isinstance(answer, int | float) and 0 <= answer <= 1,
                f"{what}: a yes/no answer is a probability, got {answer!r}",
            )
        elif question["kind"] == "choice":
            true(
                isinstance(answer, str) and "confidence" in question,
                f"{what}: a choice answer is a name with a confidence, got {question}",
            )
        else:
            true(
                isinstance(answer, int) and "confidence" in question,
                f"{what}: a rubric answer is a level with a confidence, got {question}",
            )


def _lines(issues: list[str], expected: list[tuple[str, str]]) -> None:
    """Each failed question as `check: <ask> → <answer>`, the answer's wording as check §3 gives it."""
    for ask, start in expected:
        prefix = f"check: {ask} → {start}"
        if not any(line.startswith(prefix) and line.endswith(")") for line in issues):
            fail(f"issues: expected a line starting {prefix!r} and ending with ')', got {issues}")
    equal("number of issue lines", len(issues), len(expected))


async def _screen(s: Session, word: str) -> tuple[str, str, dict[str, Any]]:
    """A conform-check run with `screen` claimed and `word` submitted: (run id, token, the envelope)."""
    run_id = str((await s.start("conform-check", {"topic": "words"}))["run"]["id"])
    token = str((await s.claim(run_id, "screen"))["token"])
    envelope = await s.send(s.agent, "submit", token=token, output={"word": word}, summary=f"Wrote {word}.")
    return run_id, token, envelope


SCREEN_PASS = [(YES_NO, "yes_no", "pass"), (CHOICE, "choice", "pass"), (RUBRIC, "rubric", "pass")]


@check("check.pass", "check profile §3 (pass: recorded as steps.<id>.check)")
async def passes(s: Session) -> None:
    """A passing submission completes the step with its verdict in run data, on every checked step."""
    run_id, _token, envelope = await _screen(s, "alpha")
    if not envelope["ok"]:
        fail(f"submit of a passing word: expected ok, got {envelope['error']}")
    view = envelope["data"]
    equal("states", (states(view)["screen"], states(view)["advise"]), ("done", "ready"))
    record = view["data"]["steps"]["screen"]
    equal("screen's output", record["output"], {"word": "alpha"})
    _verdict("steps.screen.check", record.get("check"), "pass", False, SCREEN_PASS)
    view = await s.work(run_id, "advise", {"word": "alpha"})
    view = await s.decide(s.person1, view, "review", "completed", output={"word": "alpha"})
    equal("outcome", view["run"]["outcome"], "checked")
    _verdict(
        "steps.review.check",
        view["data"]["steps"]["review"].get("check"),
        "pass",
        False,
        [(YES_NO, "yes_no", "pass")],
    )


@check(
    "check.fail", "check profile §3 (fail: not_accepted, issues, handoff)", covers=("submit/not_accepted",)
)
async def fails(s: Session) -> None:
    """A failing submission is `not_accepted` with one line per failed question; run data does not
    change; when the same attempt continues, the verdict and the lines travel in the handoff."""
    run_id, token, envelope = await _screen(s, "beta")
    if envelope["ok"] or envelope["error"]["code"] != "not_accepted":
        fail(f"submit of a wrong word: expected not_accepted, got {envelope.get('error') or 'ok'}")
    s.cover("submit/not_accepted")
    issues = envelope["error"].get("issues") or []
    _lines(issues, [(YES_NO, "no ("), (CHOICE, "beta ("), (RUBRIC, f"level 0: {WRONG_LEVEL} (")])
    view = await s.view(run_id)
    equal(
        "screen after the refusal",
        (states(view)["screen"], "screen" in view["data"]["steps"]),
        ("claimed", False),
    )
    escalated = await s.ok(s.agent, "escalate", token=token, note="The check keeps refusing.")
    back = await s.decide(s.operator, escalated, "screen", "returned", note="Write alpha.")
    handoff = (await s.claim(run_id, "screen"))["handoff"]
    true(
        isinstance(handoff, dict),
        f"handoff after a failed check and a return: expected an object, got {handoff!r}",
    )
    equal("handoff.returned.note", handoff.get("returned", {}).get("note"), "Write alpha.")
    _verdict(
        "handoff.check",
        handoff.get("check"),
        "fail",
        False,
        [(YES_NO, "yes_no", "fail"), (CHOICE, "choice", "fail"), (RUBRIC, "rubric", "fail")],
    )
    equal("handoff.issues", handoff.get("issues"), issues)
    equal("run state after the return", back["run"]["state"], "active")


@check("check.unsure", "check profile §3 (unsure: held, escalated with the verdict and the candidate)")
async def unsure(s: Session) -> None:
    """An unsure submission is accepted and held: the step is escalated with the verdict and the
    candidate; the verdict shows in run data; a person completing it with the candidate is not
    checked again."""
    run_id, _token, envelope = await _screen(s, "gamma")
    if not envelope["ok"]:
        fail(f"submit of an unclear word: expected ok (held for a person), got {envelope['error']}")
    view = envelope["data"]
    equal("screen and the run", (states(view)["screen"], view["run"]["state"]), ("waiting", "waiting"))
    item = work_item(view, "screen")
    equal(
        "item kind and decisions",
        (item["kind"], item["decide"]["decisions"]),
        ("agent", ["returned", "completed", "failed"]),
    )
    escalation = item["escalation"]
    true(isinstance(escalation, dict), f"escalation: expected an object, got {escalation!r}")
    expected = [(YES_NO, "yes_no", "fail"), (CHOICE, "choice", "unsure"), (RUBRIC, "rubric", "fail")]
    _verdict("escalation.check", escalation.get("check"), "unsure", False, expected)
    candidate = escalation.get("candidate") or {}
    equal(
        "escalation.candidate output and summary",
        (candidate.get("output"), candidate.get("summary")),
        ({"word": "gamma"}, "Wrote gamma."),
    )
    _verdict(
        "steps.screen.check while held",
        view["data"]["steps"]["screen"].get("check"),
        "unsure",
        False,
        expected,
    )
    inbox = [i for i in await s.everything(s.operator, "get_work", limit=100) if i["runId"] == run_id]
    equal("the operator's items of the run", [i["workItem"]["stepId"] for i in inbox], ["screen"])
    done = await s.decide(s.operator, view, "screen", "completed")
    equal(
        "screen completed with the candidate",
        (states(done)["screen"], done["data"]["steps"]["screen"]["output"]),
        ("done", {"word": "gamma"}),
    )
    equal("advise", states(done)["advise"], "ready")


@check(
    "check.unsure-returned", "check profile §3 (returned after unsure: the verdict travels in the handoff)"
)
async def unsure_returned(s: Session) -> None:
    run_id, _token, envelope = await _screen(s, "gamma")
    if not envelope["ok"]:
        fail(f"submit of an unclear word: expected ok, got {envelope['error']}")
    back = await s.decide(s.operator, envelope["data"], "screen", "returned", note="Pick alpha or beta.")
    equal("screen after returned", states(back)["screen"], "ready")
    handoff = (await s.claim(run_id, "screen"))["handoff"]
    true(isinstance(handoff, dict), f"handoff: expected an object, got {handoff!r}")
    equal("handoff.returned.note", handoff.get("returned", {}).get("note"), "Pick alpha or beta.")
    check_in_handoff = handoff.get("check")
    true(
        isinstance(check_in_handoff, dict) and check_in_handoff.get("verdict") == "unsure",
        f"handoff.check: expected the unsure verdict, got {check_in_handoff!r}",
    )


@check(
    "check.escalated-not-rechecked",
    "check profile §3 (a person completing an escalated step is not checked again)",
)
async def escalated_not_rechecked(s: Session) -> None:
    _run_id, _token, envelope = await _screen(s, "gamma")
    if not envelope["ok"]:
        fail(f"submit of an unclear word: expected ok, got {envelope['error']}")
    done = await s.decide(s.operator, envelope["data"], "screen", "completed", output={"word": "beta"})
    equal(
        "screen completed by a person with a wrong word",
        (states(done)["screen"], done["data"]["steps"]["screen"]["output"]),
        ("done", {"word": "beta"}),
    )


@check("check.advisory", "check profile §2 advisory, §3 (recorded, never blocks)")
async def advisory(s: Session) -> None:
    run_id = str((await s.start("conform-check", {"topic": "words"}))["run"]["id"])
    await s.work(run_id, "screen", {"word": "alpha"})
    view = await s.work(run_id, "advise", {"word": "beta"})
    equal("advise and review", (states(view)["advise"], states(view)["review"]), ("done", "waiting"))
    _verdict(
        "steps.advise.check",
        view["data"]["steps"]["advise"].get("check"),
        "fail",
        True,
        [(YES_NO, "yes_no", "fail")],
    )


@check(
    "check.task",
    "check profile §3 (a person's task submission gets the same refusal)",
    covers=("decide/not_accepted",),
)
async def task(s: Session) -> None:
    run_id = str((await s.start("conform-check", {"topic": "words"}))["run"]["id"])
    await s.work(run_id, "screen", {"word": "alpha"})
    view = await s.work(run_id, "advise", {"word": "alpha"})
    item = work_item(view, "review")
    error = await s.refused(
        s.person1,
        "decide",
        "not_accepted",
        runId=run_id,
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"word": "beta"},
    )
    _lines(error.get("issues") or [], [(YES_NO, "no (")])
    fresh = await s.view(run_id, s.person1)
    equal(
        "review after the refusal",
        (states(fresh)["review"], "review" in fresh["data"]["steps"]),
        ("waiting", False),
    )
    done = await s.decide(s.person2, fresh, "review", "completed", output={"word": "alpha"})
    equal("outcome", done["run"]["outcome"], "checked")
