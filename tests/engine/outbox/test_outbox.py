"""The outbox: every kind of notification is written in the transaction of the change it reports, with
a delivery for each `[[notify]]` target that wants its kind; a test run's deliveries are held back."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity
from engine.notify import NotifyTarget
from engine.store.migrations import MIGRATIONS
from engine.store.sqlite import SqliteStore
from engine.store.state import Notification
from tests.engine.engine_support import LENA, MIRA, OPS, SCREENER, call, make_org, ok, publish, start
from tests.support.org import OMAR

pytestmark = pytest.mark.both_stores

ALERTS = "https://alerts.example.com/apc"
CHAT = "http://127.0.0.1:9/chat"
TARGETS = (
    NotifyTarget(ALERTS, ("overdue", "escalation")),
    NotifyTarget(CHAT, ("new_work", "run_ended"), format="slack"),
)

REVIEWED = """
---
name: reviewed
description: Agent work, then a person's approval.
steps:
  - id: work
    agent: Do it.
    output: { note: string }
  - id: review
    person: reviewer
    approve: Approve the note.
    next: done
  - id: done
    finish: approved
---
"""


@pytest.fixture
async def engine(tmp_path: Path, clock: ManualClock) -> AsyncIterator[Engine]:
    eng = await Engine.open(tmp_path / "data", make_org(notify=TARGETS), clock=clock)
    try:
        await publish(eng, tmp_path, REVIEWED, {"reviewer": "g_finance"})
        yield eng
    finally:
        await eng.close()


async def decide(engine: Engine, who: Identity, run_id: str, **args: Any) -> None:
    [item] = [i for i in ok(await call(engine, who, "get_work"), "get_work")["items"] if i["runId"] == run_id]
    ids = {"runId": run_id, "workItemId": item["workItem"]["id"], "snapshot": item["workItem"]["snapshot"]}
    ok(await call(engine, who, "decide", **ids, **args), "decide")


async def test_escalation_new_work_and_the_end_of_a_run_are_notified(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = (await start(engine, "reviewed", {}, who=MIRA))["run"]["id"]
    token = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="work"), "claim")["token"]
    clock.advance(minutes=5)
    ok(await call(engine, SCREENER, "escalate", token=token, note="Cannot reach the system."), "escalate")
    clock.advance(minutes=5)
    await decide(engine, OPS, run_id, decision="completed", output={"note": "Done by hand."})
    clock.advance(minutes=5)
    await decide(engine, MIRA, run_id, decision="approved")

    notes = await engine.notifications(run_id)
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["run"]["outcome"] == "approved"
    escalation_item, review_item = (n.work_item for n in notes[:2])
    assert [replace(n, id="") for n in notes] == [
        Notification(
            "",
            "escalation",
            run_id,
            "reviewed",
            "work",
            (OPS.id,),
            "2026-10-06T09:05:00Z",
            False,
            escalation_item,
        ),
        Notification(
            "",
            "new_work",
            run_id,
            "reviewed",
            "review",
            ("mira@example.com", "omar@example.com"),
            "2026-10-06T09:10:00Z",
            False,
            review_item,
        ),
        Notification(
            "",
            "run_ended",
            run_id,
            "reviewed",
            None,
            (MIRA.id,),
            "2026-10-06T09:15:00Z",
            False,
            None,
            "approved",
        ),
    ]
    assert escalation_item is not None and review_item is not None and escalation_item != review_item
    deliveries = await engine.deliveries(run_id)
    assert [(d.notification, d.target, d.state, d.attempts, d.next_at, d.last_error) for d in deliveries] == [
        (notes[0], ALERTS, "pending", 0, "2026-10-06T09:05:00.000000Z", None),
        (notes[1], CHAT, "pending", 0, "2026-10-06T09:10:00.000000Z", None),
        (notes[2], CHAT, "pending", 0, "2026-10-06T09:15:00.000000Z", None),
    ]


async def test_a_cancelled_test_run_is_recorded_and_its_deliveries_held_back(engine: Engine) -> None:
    run_id = (await start(engine, "reviewed", {}, mode="test"))["run"]["id"]
    ok(await call(engine, OPS, "cancel", runId=run_id, reason="Trying it out."), "cancel")
    [note] = await engine.notifications(run_id)
    assert note == Notification(
        note.id, "run_ended", run_id, "reviewed", None, (), "2026-10-06T09:00:00Z", True
    )
    [delivery] = await engine.deliveries(run_id)
    assert (delivery.target, delivery.state, delivery.attempts, delivery.next_at) == (CHAT, "test", 0, None)


async def test_version_1_notifications_are_kept_when_the_store_moves_to_version_2(tmp_path: Path) -> None:
    path = tmp_path / "engine.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            MIGRATIONS[0].sqlite + "; CREATE TABLE schema_version (version INTEGER NOT NULL);"
            "INSERT INTO schema_version VALUES (1);"
            "INSERT INTO notifications (run_id, step_id, kind, recipient, at, test) VALUES "
            "('r_1', 'work', 'overdue', 'mira@example.com', '2026-10-06T12:00:00Z', 0), "
            "('r_1', 'work', 'overdue', 'ops@example.com', '2026-10-06T12:00:00Z', 0);"
        )
    conn.close()
    store = await SqliteStore.open(path)
    try:
        notes = await store.notifications()
        deliveries = await store.deliveries()
    finally:
        await store.close()
    at = "2026-10-06T12:00:00Z"
    assert notes == [
        Notification("n_1", "overdue", "r_1", "", "work", ("mira@example.com",), at, False),
        Notification("n_2", "overdue", "r_1", "", "work", ("ops@example.com",), at, False),
    ]
    assert deliveries == []


DUE = """
---
name: due
description: A person's approval, due within the hour.
steps:
  - id: review
    person: reviewer
    approve: Approve it.
    due: 1h
    next: done
  - id: done
    finish: approved
---
"""


async def test_the_engine_counts_what_its_committed_writes_told_each_person(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    people = (MIRA.id, OMAR.id, OPS.id)

    def told() -> dict[str, int]:
        return {who: engine.told.count(who) for who in people}

    assert told() == {MIRA.id: 0, OMAR.id: 0, OPS.id: 0}
    run_id = (await start(engine, "reviewed", {}, who=MIRA))["run"]["id"]
    assert told() == {MIRA.id: 0, OMAR.id: 0, OPS.id: 0}, "an agent's work tells no person"
    token = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="work"), "claim")["token"]
    ok(await call(engine, SCREENER, "escalate", token=token, note="Cannot reach the system."), "escalate")
    assert told() == {MIRA.id: 0, OMAR.id: 0, OPS.id: 1}
    [item] = ok(await call(engine, OPS, "get_work"), "get_work")["items"]
    ids = {"runId": run_id, "workItemId": item["workItem"]["id"]}
    refused = await call(engine, OPS, "decide", **ids, snapshot="0" * 32, decision="completed", output={})
    assert refused["error"]["code"] == "stale"
    assert told() == {MIRA.id: 0, OMAR.id: 0, OPS.id: 1}, "a refused write tells nobody"
    await decide(engine, OPS, run_id, decision="completed", output={"note": "Done by hand."})
    assert told() == {MIRA.id: 1, OMAR.id: 1, OPS.id: 1}, "new work for the group: each member"
    await publish(engine, tmp_path, DUE, {"reviewer": "g_finance"})
    await start(engine, "due", {}, who=LENA)
    clock.advance(hours=2)
    await engine.tick()
    assert told() == {MIRA.id: 3, OMAR.id: 3, OPS.id: 2}, "new work, then overdue (operators too)"
    notes = await engine.notifications()
    assert told() == {who: sum(who in n.recipients for n in notes) for who in people}
