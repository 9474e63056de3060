"""Check profile §3, `unsure`: the submission is held as the candidate and the step escalated; a
person returns it, completes it with the candidate or their own output, or fails it."""

from __future__ import annotations

from typing import Any

from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator import Choice, Level, YesNo
from tests.engine.engine_support import (
    MIRA,
    OPS,
    SCREENER,
    WORK_ITEM_VALIDATOR,
    call,
    claim,
    decide,
    err,
    ok,
    step_states,
)
from tests.engine.evaluator.engine_check_support import (
    CHOICE,
    PASS_VERDICT,
    RUBRIC,
    YES_NO,
    Judge,
    Screening,
    checked,
    judge,
    screening,
    submit,
    upload,
    vendor_verdict,
    without_urls,
)

__all__ = ["checked", "judge"]

UNSURE = vendor_verdict("unsure", 0.97, ("unclear", 0.9, "unsure"), (2, 0.88, "pass"), "pass")
UNSURE_LINE = f"check: {CHOICE} → unclear (0.9)"


async def held(engine: Engine, judge: Judge) -> tuple[Screening, dict[str, Any]]:
    """A vendor-check run whose first submission the check was unsure of; the submit's view."""
    judge.say(choice=[Choice("unclear", 0.9), Choice("states", 0.93)])
    screen = await screening(engine)
    return screen, ok(await submit(engine, screen), "submit")


def escalation_item(view: dict[str, Any]) -> dict[str, Any]:
    [item] = view["workItems"]
    assert [e.message for e in WORK_ITEM_VALIDATOR.iter_errors(item)] == []
    return item


async def operator_decides(
    engine: Engine, item: dict[str, Any], decision: str, **extra: Any
) -> dict[str, Any]:
    args = {**item["decide"]["arguments"], "decision": decision, **extra}
    del args["requestId"]
    return await call(engine, OPS, "decide", **args)


async def test_an_unsure_check_holds_the_candidate_and_escalates_to_the_operators(
    checked: Engine, judge: Judge
) -> None:
    screen, view = await held(checked, judge)
    assert step_states(view)["check_vendor"] == "waiting"
    assert view["run"]["state"] == "waiting"
    item = escalation_item(view)
    assert (item["stepId"], item["kind"], item["assignedTo"], item["handoff"]) == (
        "check_vendor",
        "agent",
        {"group": "operators"},
        None,
    )
    assert item["decide"]["decisions"] == ["returned", "completed", "failed"]
    escalation = item["escalation"]
    candidate = escalation.pop("candidate")
    assert escalation == {"note": UNSURE_LINE, "by": "server", "at": "2026-10-06T09:00:00Z", "check": UNSURE}
    assert without_urls(candidate) == screen.record()
    assert candidate["evidence"][0]["url"].startswith(f"http://127.0.0.1:8765/files/{screen.file['id']}?")
    assert view["data"]["steps"] == {"check_vendor": {"check": UNSURE, "history": []}}
    queue = ok(await call(checked, OPS, "get_work"), "get_work")
    assert [i["workItem"]["id"] for i in queue["items"]] == [item["id"]]
    err(await submit(checked, screen), "stale")


async def test_returned_makes_the_step_ready_with_the_note_the_verdict_and_its_lines(
    checked: Engine, judge: Judge
) -> None:
    screen, view = await held(checked, judge)
    item = escalation_item(view)
    returned = ok(
        await operator_decides(checked, item, "returned", note="Name both lists in the summary."), "decide"
    )
    assert step_states(returned)["check_vendor"] == "ready"
    assert returned["workItems"] == []
    assert returned["data"]["steps"] == {}
    again = await claim(checked, screen.run_id, "check_vendor")
    assert again["handoff"] == {
        "returned": {"note": "Name both lists in the summary.", "by": OPS.id, "at": "2026-10-06T09:00:00Z"},
        "issues": [UNSURE_LINE],
        "check": UNSURE,
    }
    resubmitted = await call(checked, SCREENER, "submit", **screen.submission(token=again["token"]))
    done = ok(resubmitted, "submit")
    assert step_states(done)["check_vendor"] == "done"
    assert done["data"]["steps"]["check_vendor"]["check"] == PASS_VERDICT
    assert judge.calls() == 6


async def test_completed_without_output_uses_the_candidate_and_is_not_checked_again(
    checked: Engine, judge: Judge
) -> None:
    screen, view = await held(checked, judge)
    done = ok(await operator_decides(checked, escalation_item(view), "completed"), "decide")
    assert step_states(done)["check_vendor"] == "done"
    assert step_states(done)["approve"] == "waiting"
    record = without_urls(done["data"]["steps"]["check_vendor"])
    expected = {k: v for k, v in screen.record().items() if k not in ("by", "at")}
    assert record == {**expected, "check": UNSURE, "by": OPS.id, "at": "2026-10-06T09:00:00Z", "history": []}
    assert judge.calls() == 3


async def test_completed_with_the_persons_own_output_records_it(checked: Engine, judge: Judge) -> None:
    _screen, view = await held(checked, judge)
    report = await upload(checked, "b3duIHJlcG9ydA==")
    done = ok(
        await operator_decides(
            checked,
            escalation_item(view),
            "completed",
            output={"cleared": False, "summary": "A close match on the EU list."},
            evidence=[{"kind": "file", "ref": report["id"]}],
            next="decline",
            reason="Possible EU sanctions match.",
        ),
        "decide",
    )
    assert (done["run"]["state"], done["run"]["outcome"]) == ("ended", "declined")
    assert without_urls(done["data"]["steps"]["check_vendor"]) == {
        "output": {"cleared": False, "summary": "A close match on the EU list."},
        "evidence": [{"kind": "file", "ref": report["id"], "sha256": report["sha256"]}],
        "next": "decline",
        "reason": "Possible EU sanctions match.",
        "check": UNSURE,
        "by": OPS.id,
        "at": "2026-10-06T09:00:00Z",
        "history": [],
    }
    assert judge.calls() == 3


async def test_completed_without_output_may_change_the_candidates_route(
    checked: Engine, judge: Judge
) -> None:
    _screen, view = await held(checked, judge)
    done = ok(
        await operator_decides(
            checked, escalation_item(view), "completed", next="decline", reason="Too close to call."
        ),
        "decide",
    )
    assert done["run"]["outcome"] == "declined"
    record = done["data"]["steps"]["check_vendor"]
    assert (record["next"], record["reason"], record["summary"]) == (
        "decline",
        "Too close to call.",
        "Searched both lists by legal name. No hits. Report attached.",
    )


async def test_a_persons_own_output_is_their_whole_submission_under_the_same_acceptance(
    checked: Engine, judge: Judge
) -> None:
    _screen, view = await held(checked, judge)
    item = escalation_item(view)
    err(
        await operator_decides(checked, item, "completed", output={"cleared": True}),
        "not_accepted",
        [
            "output.summary: missing",
            "evidence: file required",
            "next: required, one of approve, decline",
            "reason: required",
        ],
    )
    assert judge.calls() == 3


async def test_failed_ends_the_run_and_run_data_no_longer_shows_the_held_verdict(
    checked: Engine, judge: Judge
) -> None:
    _screen, view = await held(checked, judge)
    failed = ok(
        await operator_decides(checked, escalation_item(view), "failed", note="Vendor refused to cooperate."),
        "decide",
    )
    assert (failed["run"]["state"], failed["run"]["outcome"]) == ("ended", "failed")
    assert failed["data"]["steps"] == {
        "check_vendor": {
            "decision": "failed",
            "note": "Vendor refused to cooperate.",
            "by": OPS.id,
            "at": "2026-10-06T09:00:00Z",
            "history": [],
        }
    }


async def test_cancelling_a_run_ends_the_hold(checked: Engine, judge: Judge) -> None:
    screen, _view = await held(checked, judge)
    cancelled = ok(
        await call(checked, OPS, "cancel", runId=screen.run_id, reason="Duplicate request."), "cancel"
    )
    assert cancelled["data"]["steps"] == {}
    assert step_states(cancelled)["check_vendor"] == "cancelled"


async def test_rework_starts_with_an_empty_handoff_and_keeps_the_earlier_verdict_in_history(
    checked: Engine, judge: Judge, clock: ManualClock
) -> None:
    screen = await screening(checked)
    first = ok(await submit(checked, screen), "submit")
    [approval] = first["workItems"]
    clock.advance(minutes=5)
    rejected = await decide(
        checked, MIRA, screen.run_id, approval, "rejected", note="Screen the parent company too."
    )
    ok(rejected, "decide")
    again = await claim(checked, screen.run_id, "check_vendor")
    assert again["handoff"] is None

    judge.say(choice=Choice("unclear", 0.9))
    clock.advance(minutes=5)
    rework = ok(await call(checked, SCREENER, "submit", **screen.submission(token=again["token"])), "submit")
    unsure = vendor_verdict(
        "unsure", 0.97, ("unclear", 0.9, "unsure"), (2, 0.88, "pass"), "pass", at="2026-10-06T09:10:00Z"
    )
    earlier = {**screen.record(), "check": PASS_VERDICT}
    earlier = {
        k: earlier[k] for k in ("output", "evidence", "summary", "next", "reason", "check", "by", "at")
    }
    assert without_urls(rework["data"]["steps"]["check_vendor"]) == {"check": unsure, "history": [earlier]}

    item = next(i for i in rework["workItems"] if i["stepId"] == "check_vendor")
    done = ok(await operator_decides(checked, item, "completed"), "decide")
    record = without_urls(done["data"]["steps"]["check_vendor"])
    assert record["history"] == [earlier]
    assert (record["check"], record["by"], record["at"]) == (unsure, OPS.id, "2026-10-06T09:10:00Z")


async def test_a_verdict_that_mixes_fail_and_unsure_is_unsure_and_lists_both(
    checked: Engine, judge: Judge
) -> None:
    judge.say(yes_no=YesNo(0.7), rubric=Level(1, 0.95))
    screen = await screening(checked)
    view = ok(await submit(checked, screen), "submit")
    item = escalation_item(view)
    assert item["escalation"]["check"]["verdict"] == "unsure"
    assert item["escalation"]["note"] == (
        f"check: {YES_NO} → no (0.7)\ncheck: {RUBRIC} → level 1: One list is covered. (0.95)"
    )
