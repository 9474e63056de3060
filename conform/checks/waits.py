"""Time on the server's clock: waits, wait_until, wait_for with events and timeouts, due and overdue
(spec §2.2, §2.4, §3.1, §3.6; tools.md send_event).

The runner cannot move the server's clock; it waits for it. The processes use minutes, and the config
declares how much faster than real time the server's clock runs, so these checks take seconds on a
sped-up server. Times the server records are compared with the times it reported earlier (a run's
`startedAt`, a write's `updatedAt`), never with the runner's own clock.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta, timezone
from typing import Any

from conform.checks.common import vendor_at_approval
from conform.clock import parse_time
from conform.expect import between, equal, equal_time, near, true
from conform.registry import check
from conform.session import Session, at_offset, states, step_entry, work_item

MINUTE = 60.0
PAST = "2020-01-01T00:00:00Z"


def _later(view: dict[str, Any]) -> bool:
    return bool(view["run"]["state"] == "ended")


async def _settlement(s: Session) -> str:
    return str((await s.start("conform-settlement", {"ref": "S-1"}))["run"]["id"])


async def _request(s: Session, run_id: str) -> Any:
    return await s.work(run_id, "request", {"sent": True})


def _server_record(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "at"}


@check(
    "time.wait", "spec §2.2 wait, wait_until (a time already past continues at once), §3.1", waits=3 * MINUTE
)
async def wait(s: Session) -> None:
    """A `wait: 1m` holds the run a minute of server time; a wait_until already past continues at once."""
    view = await s.start("conform-timed", {"releaseAt": PAST})
    run_id, started = view["run"]["id"], view["run"]["startedAt"]
    equal(
        "states at start",
        (states(view), view["run"]["state"]),
        ({"pause": "waiting", "hold": None, "done": None}, "waiting"),
    )
    ended = await s.until_view(
        run_id,
        "the run released after its one-minute wait",
        _later,
        parse_time(started) + timedelta(seconds=MINUTE),
    )
    equal(
        "outcome",
        (ended["run"]["outcome"], ended["run"]["ended"]["by"], ended["run"]["ended"]["note"]),
        ("released", "server", None),
    )
    steps = ended["data"]["steps"]
    equal(
        "records of the waits",
        (_server_record(steps["pause"]), _server_record(steps["hold"])),
        ({"by": "server", "history": []}, {"by": "server", "history": []}),
    )
    between("pause.at", steps["pause"]["at"], at_offset(started, MINUTE), at_offset(started, MINUTE * 10))
    equal_time("hold.at (its time had passed)", steps["hold"]["at"], steps["pause"]["at"])
    equal("states at the end", states(ended), {"pause": "done", "hold": "done", "done": "done"})


@check("time.wait-until", "spec §2.2 wait_until, §2.3 datetime (RFC 3339 with offset)", waits=5 * MINUTE)
async def wait_until(s: Session) -> None:
    """wait_until holds until the instant its datetime names, whatever offset it is written in."""

    async def one(offset_hours: int) -> None:
        release = s.now() + timedelta(minutes=3)
        zone = timezone(timedelta(hours=offset_hours))
        written = release.astimezone(zone).strftime("%Y-%m-%dT%H:%M:%S%z")
        written = f"{written[:-2]}:{written[-2:]}"
        view = await s.start("conform-timed", {"releaseAt": written})
        run_id = view["run"]["id"]
        started = view["run"]["startedAt"]
        await s.until_view(
            run_id,
            "the one-minute pause over",
            lambda v: states(v)["pause"] == "done",
            parse_time(started) + timedelta(seconds=MINUTE),
        )
        ended = await s.until_view(run_id, f"the run released at {written}", _later, release)
        hold = ended["data"]["steps"]["hold"]
        release_text = release.strftime("%Y-%m-%dT%H:%M:%SZ")
        between(
            f"hold.at for releaseAt {written}", hold["at"], release_text, at_offset(release_text, MINUTE * 30)
        )
        equal("outcome", ended["run"]["outcome"], "released")

    await asyncio.gather(one(2), one(-3))


@check(
    "time.wait-until-missing", "spec §2.2 wait_until (a missing value fails the run), §3.5", waits=3 * MINUTE
)
async def wait_until_missing(s: Session) -> None:
    view = await s.start("conform-timed", {})
    started = view["run"]["startedAt"]
    failed = await s.until_view(
        view["run"]["id"],
        "the run failed at its wait_until",
        _later,
        parse_time(started) + timedelta(seconds=MINUTE),
    )
    equal(
        "run",
        (failed["run"]["state"], failed["run"]["outcome"], failed["run"]["ended"]["by"]),
        ("ended", "failed", "server"),
    )
    note = failed["run"]["ended"]["note"]
    true(
        isinstance(note, str) and bool(note.strip()), f"ended.note: expected why the run failed, got {note!r}"
    )
    equal("states", states(failed), {"pause": "done", "hold": "failed", "done": None})
    equal(
        "hold's record",
        _server_record(failed["data"]["steps"]["hold"]),
        {"decision": "failed", "note": note, "by": "server", "history": []},
    )


LEAP_SECONDS = ("2016-12-31T23:59:60Z", "1998-12-31T15:59:60.123-08:00")
"""Leap seconds RFC 3339 §5.6 writes, the second one in an offset (the JSON Schema test suite's)."""
NOT_LEAP_SECONDS = ("2016-12-31T23:59:61Z", "2016-12-31T23:58:60Z", "2016-12-31T22:59:60Z")
"""Second 61, and second 60 outside the last minute of a UTC day."""


@check(
    "time.leap-second",
    "spec §2.3 datetime (RFC 3339 §5.6: second 60, year 0000), §2.2 wait_until",
    waits=3 * MINUTE,
)
async def leap_second(s: Session) -> None:
    """A leap second and a year 0000 are datetimes, taken as written; a wait_until on a leap second
    already past continues at once. Second 61, or 60 where no leap second can be, is `invalid`."""
    typed = {"s": "leap", "n": 1, "b": True, "d": "0000-02-29", "l": [], "o": {}, "p": s.person2.value}
    for written in (*LEAP_SECONDS, "0000-01-01T00:00:00Z"):
        view = await s.start("conform-typed", {**typed, "dt": written})
        equal(f"data.inputs with dt {written}", view["data"]["inputs"], {**typed, "dt": written})
    for written in NOT_LEAP_SECONDS:
        error = await s.refused(
            s.agent, "start_run", "invalid", process="conform-typed", inputs={**typed, "dt": written}
        )
        issues = error.get("issues") or []
        true(
            len(issues) == 1 and issues[0].startswith("inputs.dt"),
            f"inputs.dt = {written!r}: expected one issue on inputs.dt, got {issues}",
        )
    view = await s.start("conform-timed", {"releaseAt": LEAP_SECONDS[0]})
    ended = await s.until_view(
        view["run"]["id"],
        "the run released after its one-minute wait",
        _later,
        parse_time(view["run"]["startedAt"]) + timedelta(seconds=MINUTE),
    )
    equal("outcome", (ended["run"]["outcome"], states(ended)["hold"]), ("released", "done"))
    steps = ended["data"]["steps"]
    equal_time("hold.at (its leap second had passed)", steps["hold"]["at"], steps["pause"]["at"])


@check("time.event-now", "spec §3.6, §3.1 (a wait_for records the sender and the data); tools.md send_event")
async def event_now(s: Session) -> None:
    """An event for a ready wait is consumed at once: its data is the wait's output, its sender `by`."""
    run_id = await _settlement(s)
    view = await _request(s, run_id)
    equal(
        "first_payment and the run",
        (states(view)["first_payment"], view["run"]["state"]),
        ("waiting", "waiting"),
    )
    equal(
        "send_event",
        await s.ok(s.agent2, "send_event", runId=run_id, name="payment", data={"amount": 10}),
        {"consumedBy": "first_payment"},
    )
    after = await s.view(run_id)
    record = after["data"]["steps"]["first_payment"]
    equal(
        "the wait's record",
        _server_record(record),
        {"output": {"amount": 10}, "by": s.agent2.value, "history": []},
    )
    equal("second_payment", states(after)["second_payment"], "waiting")
    equal_time("first_payment.at", record["at"], after["run"]["updatedAt"])


@check("time.events-held", "spec §3.6 (held events, oldest first, one wait each)")
async def events_held(s: Session) -> None:
    """Events that arrive before their wait are held per run and consumed oldest first, one per wait,
    when the wait becomes ready; `at` is when the wait completed, not when the event came."""
    run_id = await _settlement(s)
    other = await _settlement(s)
    equal(
        "first event",
        await s.ok(s.agent, "send_event", runId=run_id, name="payment", data={"n": 1}),
        {"consumedBy": None},
    )
    equal(
        "second event",
        await s.ok(s.operator, "send_event", runId=run_id, name="payment", data={"n": 2}),
        {"consumedBy": None},
    )
    equal("run data while the events are held", (await s.view(run_id))["data"]["steps"], {})
    view = await _request(s, run_id)
    equal("run", (view["run"]["state"], view["run"]["outcome"]), ("ended", "settled"))
    steps = view["data"]["steps"]
    equal(
        "first wait",
        (steps["first_payment"]["output"], steps["first_payment"]["by"]),
        ({"n": 1}, s.agent.value),
    )
    equal(
        "second wait",
        (steps["second_payment"]["output"], steps["second_payment"]["by"]),
        ({"n": 2}, s.operator.value),
    )
    equal_time(
        "first_payment.at (when its wait became ready)", steps["first_payment"]["at"], steps["request"]["at"]
    )
    equal(
        "states",
        states(view),
        {
            "request": "done",
            "first_payment": "done",
            "second_payment": "done",
            "chase": None,
            "settled": "done",
        },
    )
    equal("the other run", states(await s.view(other))["request"], "ready")


@check("time.event-per-wait", "spec §3.6 (each delivery satisfies one wait)")
async def event_per_wait(s: Session) -> None:
    run_id = await _settlement(s)
    await s.ok(s.agent, "send_event", runId=run_id, name="payment", data={"n": 1})
    view = await _request(s, run_id)
    equal(
        "waits after one event",
        (states(view)["first_payment"], states(view)["second_payment"]),
        ("done", "waiting"),
    )
    equal(
        "the next event",
        await s.ok(s.agent, "send_event", runId=run_id, name="payment"),
        {"consumedBy": "second_payment"},
    )


@check("time.event-unmatched", "spec §3.6 (an event with no matching wait is held)")
async def event_unmatched(s: Session) -> None:
    run_id = await _settlement(s)
    await _request(s, run_id)
    before = await s.view(run_id)
    for name in ("refund", "payments"):
        equal(
            f"send_event {name}",
            await s.ok(s.agent, "send_event", runId=run_id, name=name, data={"x": 1}),
            {"consumedBy": None},
        )
    after = await s.view(run_id)
    equal(
        "run data and steps after unmatched events",
        (after["data"], after["steps"]),
        (before["data"], before["steps"]),
    )


@check(
    "time.event-rules",
    "spec §3.6 (names, who sends), §6 rule 3 (the cap bounds held event data)",
    covers=("send_event/invalid", "send_event/forbidden", "send_event/not_found", "get_run/not_found"),
)
async def event_rules(s: Session) -> None:
    """Names match the step id pattern; only agents and operators send; data within the run-data cap,
    `invalid` over it as inputs over it are at start (`agent.run-data-cap`): both are the call's own
    data, where `not_accepted` is for a submission of work (spec §4.3)."""
    run_id = await _settlement(s)
    for name in ("Payment", "1payment", "pay ment", "", "p" * 65):
        await s.refused(s.agent, "send_event", "invalid", runId=run_id, name=name)
    for who in (s.person1, s.outsider):
        await s.refused(who, "send_event", "forbidden", runId=run_id, name="payment")
    await s.refused(s.agent, "send_event", "not_found", runId="r_conform_no_such_run", name="payment")
    await s.refused(s.operator, "get_run", "not_found", runId="r_conform_no_such_run")
    cap = int(s.described["limits"]["runDataBytes"])
    await s.refused(s.agent, "send_event", "invalid", runId=run_id, name="payment", data={"blob": "b" * cap})
    equal(
        "a small event",
        await s.ok(s.agent, "send_event", runId=run_id, name="payment", data={"n": 1}),
        {"consumedBy": None},
    )
    view = await _request(s, run_id)
    equal("the held event's data", view["data"]["steps"]["first_payment"]["output"], {"n": 1})


@check("time.timeout", "spec §2.2 timeout, on_timeout; §3.1", waits=4 * MINUTE)
async def timeout(s: Session) -> None:
    """A wait_for that times out continues at on_timeout, recorded by the server; a later event no
    longer satisfies it."""
    view = await s.start("conform-timeout", {"ref": "T-1"})
    run_id, started = view["run"]["id"], view["run"]["startedAt"]
    equal("payment at start", states(view)["payment"], "waiting")
    timed_out = await s.until_view(
        run_id,
        "chase ready after the two-minute timeout",
        lambda v: states(v)["chase"] == "ready",
        parse_time(started) + timedelta(seconds=2 * MINUTE),
    )
    record = timed_out["data"]["steps"]["payment"]
    equal("the timed-out wait's record", _server_record(record), {"by": "server", "history": []})
    between("payment.at", record["at"], at_offset(started, 2 * MINUTE), at_offset(started, 2 * MINUTE + 1800))
    equal("states", states(timed_out), {"payment": "done", "chase": "ready", "settled": None})
    equal(
        "a late event",
        await s.ok(s.agent, "send_event", runId=run_id, name="payment", data={"late": True}),
        {"consumedBy": None},
    )
    listed = await s.agent_items(s.agent, [run_id], "conform-timeout")
    equal("get_work after the timeout", [i["stepId"] for i in listed], ["chase"])


@check("time.overdue", "spec §2.2 due (overdue; the work stays open)", waits=4 * MINUTE)
async def overdue(s: Session) -> None:
    """Past its due an agent step and an approval are marked overdue, and both can still be done."""
    view = await s.start("conform-overdue", {"ref": "O-1"})
    run_id, started = view["run"]["id"], view["run"]["startedAt"]
    due = near(at_offset(started, MINUTE))
    equal(
        "work at start",
        step_entry(view, "work"),
        {"id": "work", "kind": "agent", "state": "ready", "due": due, "overdue": False},
    )
    late = await s.until_view(
        run_id, "work overdue", lambda v: step_entry(v, "work").get("overdue") is True, parse_time(due.text)
    )
    equal(
        "work once overdue",
        (step_entry(late, "work"), late["run"]["state"]),
        ({"id": "work", "kind": "agent", "state": "ready", "due": due, "overdue": True}, "active"),
    )
    listed = await s.agent_items(s.agent, [run_id], "conform-overdue")
    equal(
        "get_work item once overdue",
        [(i["stepId"], i["due"], i["overdue"]) for i in listed],
        [("work", due, True)],
    )
    submitted = await s.work(run_id, "work", {"done": True})
    sign_due = near(at_offset(submitted["run"]["updatedAt"], MINUTE))
    equal(
        "sign when it becomes ready",
        step_entry(submitted, "sign"),
        {"id": "sign", "kind": "approve", "state": "waiting", "due": sign_due, "overdue": False},
    )
    equal("the item's due", work_item(submitted, "sign")["due"], sign_due)
    late = await s.until_view(
        run_id,
        "sign overdue",
        lambda v: step_entry(v, "sign").get("overdue") is True,
        parse_time(sign_due.text),
    )
    done = await s.decide(s.person1, late, "sign", "approved")
    equal("outcome of the late run", done["run"]["outcome"], "done")


@check("time.due-restarts", "spec §2.2 due (a repeat of the step restarts the clock)")
async def due_restarts(s: Session) -> None:
    view = await vendor_at_approval(s)
    rejected = await s.decide(s.person1, view, "approve", "rejected", note="Redo.")
    equal(
        "check_vendor after the rejection",
        step_entry(rejected, "check_vendor"),
        {
            "id": "check_vendor",
            "kind": "agent",
            "state": "ready",
            "due": near(at_offset(rejected["run"]["updatedAt"], 86400)),
            "overdue": False,
        },
    )
    equal(
        "the approval after the rejection",
        step_entry(rejected, "approve"),
        {"id": "approve", "kind": "approve", "state": None},
    )
