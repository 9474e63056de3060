"""A timer applied late takes effect at its due time (spec §2.2, §3.1 `at`): a run's state, the `at`
of each step it completed, the `readySince` and `due` of what it reached and the overdue notice, does
not depend on when the timer loop ran or which write came first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.state import Notification
from tests.engine.engine_support import MIRA, SCREENER, call, ok, publish, start

pytestmark = pytest.mark.both_stores

CHAIN = """
---
name: late-chain
description: A wait, a wait_for met by a held event, a wait_for that times out, then work with a deadline.
steps:
  - id: pause
    wait: 1h
  - id: hold
    wait_for: paid
  - id: gap
    wait_for: nudge
    timeout: 30m
    on_timeout: work
  - id: work
    agent: Do it.
    due: 1h
  - id: done
    finish: done
---
"""

SHORT = """
---
name: late-end
description: A short wait, then the end.
steps:
  - id: pause
    wait: 15m
  - id: done
    finish: done
---
"""

T0 = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


async def _started(engine: Engine, tmp_path: Path, clock: ManualClock) -> str:
    """The chain, started at 09:00, with `paid` sent at 09:10 and held until `hold` is reached."""
    await publish(engine, tmp_path, CHAIN)
    run_id = (await start(engine, "late-chain", {}))["run"]["id"]
    clock.set(T0 + timedelta(minutes=10))
    reply = await call(engine, SCREENER, "send_event", runId=run_id, name="paid", data={"n": 1})
    assert ok(reply, "send_event") == {"consumedBy": None}
    return run_id


async def _assert_settled_on_schedule(engine: Engine, run_id: str, updated_at: str) -> None:
    """pause ends 10:00 and `hold` takes the event then; gap times out 10:30; work is due 11:30."""
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["data"]["steps"] == {
        "pause": {"by": "server", "at": "2026-10-06T10:00:00Z", "history": []},
        "hold": {"output": {"n": 1}, "by": SCREENER.id, "at": "2026-10-06T10:00:00Z", "history": []},
        "gap": {"by": "server", "at": "2026-10-06T10:30:00Z", "history": []},
    }
    assert view["steps"][3] == {
        "id": "work",
        "kind": "agent",
        "state": "ready",
        "due": "2026-10-06T11:30:00Z",
        "overdue": True,
    }
    assert view["run"]["updatedAt"] == updated_at
    [item] = ok(await call(engine, SCREENER, "get_work"), "get_work")["items"]
    assert (item["readySince"], item["due"], item["overdue"]) == (
        "2026-10-06T10:30:00Z",
        "2026-10-06T11:30:00Z",
        True,
    )
    [note] = await engine.notifications(run_id)
    assert note == Notification(
        note.id, "overdue", run_id, "late-chain", "work", ("ops@example.com",), "2026-10-06T11:30:00Z", False
    )


@pytest.mark.parametrize(
    "ticks",
    [[60, 90, 150, 180], [180], [75, 180], [100, 180]],
    ids=["on time", "one late tick", "late for the wait", "late for the timeout"],
)
async def test_ticks_give_the_same_run_whenever_they_come(
    engine: Engine, tmp_path: Path, clock: ManualClock, ticks: list[int]
) -> None:
    run_id = await _started(engine, tmp_path, clock)
    for minutes in ticks:
        clock.set(T0 + timedelta(minutes=minutes))
        await engine.tick()
    # The last change was the overdue mark at 11:30; a tick writes nothing of its own.
    await _assert_settled_on_schedule(engine, run_id, "2026-10-06T11:30:00Z")


async def test_a_late_write_applies_each_timer_at_its_due_time_then_its_own_change(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id = await _started(engine, tmp_path, clock)
    clock.set(T0 + timedelta(hours=3))
    reply = await call(engine, SCREENER, "send_event", runId=run_id, name="other")
    assert ok(reply, "send_event") == {"consumedBy": None}
    await _assert_settled_on_schedule(engine, run_id, "2026-10-06T12:00:00Z")


async def test_a_late_timer_that_reaches_a_finish_ends_the_run_at_its_due_time(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, SHORT)
    run_id = (await start(engine, "late-end", {}))["run"]["id"]
    clock.set(T0 + timedelta(days=1))
    await engine.tick()
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["run"]["ended"] == {"by": "server", "at": "2026-10-06T09:15:00Z", "note": None}
    assert (view["run"]["outcome"], view["run"]["updatedAt"]) == ("done", "2026-10-06T09:15:00Z")
    assert view["data"]["steps"]["pause"]["at"] == "2026-10-06T09:15:00Z"
