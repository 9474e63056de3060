"""Time (spec §2.2, §3.6): wait, wait_until, wait_for timeouts, `due` and the notifications outbox,
all driven by the injected clock and `engine.tick()`, and persisted across a restart."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.state import Notification
from tests.engine.engine_support import (
    MIRA,
    OMAR,
    OPS,
    SCREENER,
    call,
    claim,
    make_org,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores

WAITS = """
---
name: waits
description: A wait, then a wait until a date, then an agent step with a deadline.
inputs:
  at: { type: datetime, optional: true }
steps:
  - id: pause
    wait: 2h
  - id: until
    wait_until: inputs.at
  - id: work
    agent: Do it.
    due: 1h
  - id: done
    finish: done
---
"""

EVENTS = """
---
name: events
description: Wait for a signal, with a timeout.
steps:
  - id: signal
    wait_for: settled
    timeout: 1d
    on_timeout: chase
    next: confirm
  - id: confirm
    agent: Confirm.
    next: done
  - id: chase
    person: collector
    task: Chase the payment.
    due: 4h
    next: done
  - id: done
    finish: done
---
"""


async def test_wait_and_wait_until_continue_when_their_time_comes(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, WAITS)
    view = await start(engine, "waits", {"at": "2026-10-06T12:30:00+01:00"})
    run_id = view["run"]["id"]
    assert (step_states(view)["pause"], view["run"]["state"]) == ("waiting", "waiting")
    clock.advance(hours=1, minutes=59)
    await engine.tick()
    assert step_states(ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run"))["pause"] == "waiting"
    clock.advance(minutes=1)
    await engine.tick()
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["data"]["steps"]["pause"] == {"by": "server", "at": "2026-10-06T11:00:00Z", "history": []}
    assert step_states(view)["until"] == "waiting"
    clock.advance(minutes=30)
    await engine.tick()
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view) == {"pause": "done", "until": "done", "work": "ready", "done": None}
    assert view["run"]["state"] == "active"


async def test_a_wait_until_already_past_continues_at_once_and_a_missing_one_fails(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, WAITS)
    view = await start(engine, "waits", {"at": "2026-10-01T00:00:00Z"})
    clock.advance(hours=2)
    await engine.tick()
    view = ok(await call(engine, MIRA, "get_run", runId=view["run"]["id"]), "get_run")
    assert step_states(view)["work"] == "ready"
    missing = await start(engine, "waits", {})
    clock.advance(hours=2)
    await engine.tick()
    failed = ok(await call(engine, MIRA, "get_run", runId=missing["run"]["id"]), "get_run")
    note = "inputs.at is missing or not a datetime"
    assert (failed["run"]["outcome"], failed["run"]["ended"]) == (
        "failed",
        {"by": "server", "at": "2026-10-06T13:00:00Z", "note": note},
    )
    assert step_states(failed)["until"] == "failed"


async def test_due_marks_overdue_and_notifies_without_sending_for_test_runs(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, WAITS)
    live = (await start(engine, "waits", {"at": "2026-10-01T00:00:00Z"}))["run"]["id"]
    test = (await start(engine, "waits", {"at": "2026-10-01T00:00:00Z"}, mode="test"))["run"]["id"]
    clock.advance(hours=2)
    await engine.tick()
    [item, _] = ok(await call(engine, SCREENER, "get_work"), "get_work")["items"]
    assert (item["due"], item["overdue"]) == ("2026-10-06T12:00:00Z", False)
    clock.advance(hours=1)
    await engine.tick()
    items = ok(await call(engine, SCREENER, "get_work"), "get_work")["items"]
    assert [(i["runId"], i["overdue"]) for i in items] == [(live, True), (test, True)]
    view = ok(await call(engine, MIRA, "get_run", runId=live), "get_run")
    assert view["steps"][2] == {
        "id": "work",
        "kind": "agent",
        "state": "ready",
        "due": "2026-10-06T12:00:00Z",
        "overdue": True,
    }
    notes = await engine.notifications()
    assert len({n.id for n in notes}) == 2 and all(n.id.startswith("n_") for n in notes)
    at, ops = "2026-10-06T12:00:00Z", ("ops@example.com",)
    # Both runs' timers fall due together: on PostgreSQL they are applied concurrently, and either may
    # commit first.
    notes = sorted(notes, key=lambda n: n.test)
    assert [replace(n, id="") for n in notes] == [
        Notification("", "overdue", live, "waits", "work", ops, at, False),
        Notification("", "overdue", test, "waits", "work", ops, at, True),
    ]
    token = (await claim(engine, live, "work"))["token"]
    view = ok(await call(engine, SCREENER, "submit", token=token, output={}, summary="late"), "submit")
    assert view["run"]["outcome"] == "done"


async def test_wait_for_times_out_into_on_timeout_and_the_task_due_notifies_its_group(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, EVENTS, {"collector": "g_finance"})
    run_id = (await start(engine, "events", {}))["run"]["id"]
    clock.advance(days=1)
    await engine.tick()
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view) == {"signal": "done", "confirm": None, "chase": "waiting", "done": None}
    assert view["data"]["steps"]["signal"] == {"by": "server", "at": "2026-10-07T09:00:00Z", "history": []}
    clock.advance(hours=4)
    await engine.tick()
    notes = await engine.notifications(run_id)
    [entry] = ok(await call(engine, OMAR, "get_work"), "get_work")["items"]
    item = entry["workItem"]["id"]
    assert [(n.kind, n.step_id, n.recipients, n.work_item, n.at) for n in notes] == [
        ("new_work", "chase", ("mira@example.com", "omar@example.com"), item, "2026-10-07T09:00:00Z"),
        (
            "overdue",
            "chase",
            ("mira@example.com", "omar@example.com", "ops@example.com"),
            item,
            "2026-10-07T13:00:00Z",
        ),
    ]
    assert entry["workItem"]["due"] == "2026-10-07T13:00:00Z"
    view = ok(await call(engine, OPS, "get_run", runId=run_id), "get_run")
    assert view["steps"][2]["overdue"] is True


async def test_a_write_applies_due_timers_first(engine: Engine, tmp_path: Path, clock: ManualClock) -> None:
    await publish(engine, tmp_path, EVENTS, {"collector": "g_finance"})
    run_id = (await start(engine, "events", {}))["run"]["id"]
    clock.advance(days=2)
    reply = await call(engine, SCREENER, "send_event", runId=run_id, name="settled")
    assert ok(reply, "send_event") == {"consumedBy": None}
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view)["chase"] == "waiting"


async def test_timers_survive_a_restart(tmp_path: Path, clock: ManualClock) -> None:
    engine = await Engine.open(tmp_path / "data", make_org(), clock=clock)
    await publish(engine, tmp_path, WAITS)
    run_id = (await start(engine, "waits", {"at": "2026-10-01T00:00:00Z"}))["run"]["id"]
    await engine.close()
    clock.advance(hours=3)
    reopened = await Engine.open(tmp_path / "data", make_org(), clock=clock)
    try:
        await reopened.tick()
        view = ok(await call(reopened, MIRA, "get_run", runId=run_id), "get_run")
        assert step_states(view) == {"pause": "done", "until": "done", "work": "ready", "done": None}
        # The wait ended at 11:00 while the server was down: `work` was reached then, due at 12:00.
        assert (view["steps"][2]["due"], view["steps"][2]["overdue"]) == ("2026-10-06T12:00:00Z", True)
    finally:
        await reopened.close()
