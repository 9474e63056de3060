"""Delivering the outbox: POSTs to a real HTTP receiver on 127.0.0.1 that fails when told to, retries
with exponential backoff on the injected clock (no test sleeps through it), a bound after which a
delivery is given up with its failure recorded, signatures, the Slack body, restarts, lapsed claims,
and several servers on one database delivering each notification once."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from engine.clock import ManualClock
from engine.core import Engine
from engine.http.app import RunningServer, serve_asgi
from engine.notify import NotifyTarget
from engine.org import OrgConfig
from engine.outbox import Deliverer, RetryPolicy
from engine.store.base import Delivery
from engine.store.sqlite import SqliteStore
from tests.engine.engine_support import MIRA, OPS, call, make_org, ok, publish, start
from tests.support.ports import free_port

pytestmark = pytest.mark.both_stores

SECRET = "shared-secret-for-tests"
TASK = """
---
name: chase
description: One task for finance.
steps:
  - id: call
    person: collector
    task: Call the customer.
    next: done
  - id: done
    finish: done
---
"""


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Answers each POST with the next scripted status (then 200) and keeps what it got."""

    statuses: list[int] = field(default_factory=list)
    got: list[Received] = field(default_factory=list)
    hold: asyncio.Event | None = None
    """When set, every request waits for the event before answering."""
    server: RunningServer | None = None

    async def handle(self, request: Request) -> PlainTextResponse:
        self.got.append(Received(request.url.path, dict(request.headers), await request.body()))
        if self.hold is not None:
            await self.hold.wait()
        status = self.statuses.pop(0) if self.statuses else 200
        return PlainTextResponse("busy, try later" if status >= 500 else "ok", status_code=status)

    def url(self, path: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}{path}"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    found = Receiver()
    app = Starlette(routes=[Route("/{path:path}", found.handle, methods=["POST"])])
    found.server = await serve_asgi(app, "127.0.0.1", 0)
    try:
        yield found
    finally:
        await found.server.stop()


def org_with(*targets: NotifyTarget) -> OrgConfig:
    return make_org(notify=targets)


async def open_engine(root: Path, org: OrgConfig, clock: ManualClock) -> Engine:
    engine = await Engine.open(root / "data", org, clock=clock)
    await publish(engine, root, TASK, {"collector": "g_finance"})
    return engine


@pytest.fixture
async def deliverers() -> AsyncIterator[list[Deliverer]]:
    made: list[Deliverer] = []
    try:
        yield made
    finally:
        for deliverer in made:
            await deliverer.aclose()


def deliverer_for(made: list[Deliverer], engine: Engine, clock: ManualClock, **policy: Any) -> Deliverer:
    found = Deliverer(engine.store, engine.org.notify, clock, policy=RetryPolicy(**policy))
    made.append(found)
    return found


def summary(delivery: Delivery) -> tuple[object, ...]:
    return (
        delivery.state,
        delivery.attempts,
        delivery.next_at,
        delivery.last_error,
        delivery.delivered_at,
        delivery.given_up_at,
    )


async def test_a_failing_receiver_is_retried_with_backoff_until_it_takes_the_notification(
    tmp_path: Path, clock: ManualClock, receiver: Receiver, deliverers: list[Deliverer]
) -> None:
    url = receiver.url("/hooks/apc")
    engine = await open_engine(tmp_path, org_with(NotifyTarget(url, ("new_work",), SECRET)), clock)
    try:
        run_id = (await start(engine, "chase", {}, who=MIRA))["run"]["id"]
        deliverer = deliverer_for(deliverers, engine, clock)
        receiver.statuses = [503, 500]

        [(first, result)] = await deliverer.run_once()
        assert (result.state, result.error) == ("pending", "HTTP 503 Service Unavailable: busy, try later")
        [row] = await engine.deliveries(run_id)
        retry = "2026-10-06T09:00:30.000000Z"
        assert summary(row) == (
            "pending",
            1,
            retry,
            "HTTP 503 Service Unavailable: busy, try later",
            None,
            None,
        )
        assert await deliverer.run_once() == []
        clock.advance(29)
        assert await deliverer.run_once() == []
        clock.advance(1)
        [(_, result)] = await deliverer.run_once()
        assert (result.state, result.retry_at) == ("pending", "2026-10-06T09:01:30.000000Z")
        clock.advance(59)
        assert await deliverer.run_once() == []
        clock.advance(1)
        [(_, result)] = await deliverer.run_once()
        assert result.state == "delivered"
        [row] = await engine.deliveries(run_id)
        error = "HTTP 500 Internal Server Error: busy, try later"
        assert summary(row) == ("delivered", 3, None, error, "2026-10-06T09:01:30.000000Z", None)
        assert await deliverer.run_once() == []
    finally:
        await engine.close()

    note = first.notification
    assert [r.path for r in receiver.got] == ["/hooks/apc"] * 3
    assert all(r.body == receiver.got[0].body for r in receiver.got)
    assert json.loads(receiver.got[0].body) == {
        "id": note.id,
        "kind": "new_work",
        "at": "2026-10-06T09:00:00Z",
        "run": {"id": run_id, "process": "chase"},
        "step": "call",
        "workItem": note.work_item,
        "recipients": ["mira@example.com", "omar@example.com"],
        "text": f"New work: chase run {run_id}, step call for mira@example.com, omar@example.com",
    }
    for got, at in zip(
        receiver.got, ("2026-10-06T09:00:00", "2026-10-06T09:00:30", "2026-10-06T09:01:30"), strict=True
    ):
        timestamp = got.headers["x-apc-timestamp"]
        assert int(timestamp) == int(datetime.fromisoformat(at + "+00:00").timestamp())
        expected = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + got.body, hashlib.sha256).hexdigest()
        assert got.headers["x-apc-signature"] == f"sha256={expected}"
        assert (got.headers["x-apc-notification"], got.headers["x-apc-delivery"]) == (note.id, str(first.id))
        assert (got.headers["content-type"], got.headers["user-agent"]) == (
            "application/json",
            "apc-notify/1",
        )


@pytest.mark.parametrize(
    ("statuses", "closed", "attempts", "error"),
    [
        ([503, 503, 503], False, 3, "HTTP 503 Service Unavailable: busy, try later"),
        ([], True, 3, None),
        ([404], False, 1, "HTTP 404 Not Found: ok"),
    ],
    ids=["keeps failing", "nobody listening", "refused for good"],
)
async def test_a_delivery_is_given_up_after_the_bound_with_the_failure_recorded(
    tmp_path: Path,
    clock: ManualClock,
    receiver: Receiver,
    deliverers: list[Deliverer],
    statuses: list[int],
    closed: bool,
    attempts: int,
    error: str | None,
) -> None:
    url = f"http://127.0.0.1:{free_port()}/gone" if closed else receiver.url("/hook")
    engine = await open_engine(tmp_path, org_with(NotifyTarget(url, ("new_work",))), clock)
    try:
        run_id = (await start(engine, "chase", {}, who=MIRA))["run"]["id"]
        deliverer = deliverer_for(deliverers, engine, clock, max_attempts=3, first_retry_seconds=10)
        receiver.statuses = statuses
        for _ in range(attempts - 1):
            [(_, result)] = await deliverer.run_once()
            assert result.state == "pending"
            clock.advance(hours=1)
        [(_, result)] = await deliverer.run_once()
        clock.advance(days=1)
        assert await deliverer.run_once() == []
        [row] = await engine.deliveries(run_id)
    finally:
        await engine.close()
    assert result.state == "given_up"
    recorded = row.last_error if error is None else error
    assert recorded is not None and recorded.startswith("HTTP" if error else "ConnectError")
    at = f"2026-10-06T{9 + attempts - 1:02d}:00:00.000000Z"
    assert summary(row) == ("given_up", attempts, None, recorded, None, at)
    assert len(receiver.got) == (0 if closed else attempts)


async def test_slack_targets_get_a_text_body_with_markup_characters_escaped(
    tmp_path: Path, clock: ManualClock, receiver: Receiver, deliverers: list[Deliverer]
) -> None:
    url = receiver.url("/services/T000/B000/XXXX")
    target = NotifyTarget(url, ("new_work", "run_ended"), format="slack")
    engine = await open_engine(tmp_path, org_with(target), clock)
    try:
        run_id = (await start(engine, "chase", {}, who=MIRA))["run"]["id"]
        ok(await call(engine, OPS, "cancel", runId=run_id, reason="<duplicate> & late"), "cancel")
        assert len(await deliverer_for(deliverers, engine, clock).run_once()) == 2
    finally:
        await engine.close()
    assert [json.loads(r.body) for r in receiver.got] == [
        {"text": f"New work: chase run {run_id}, step call for mira@example.com, omar@example.com"},
        {"text": f"Run cancelled: chase run {run_id}"},
    ]
    assert "x-apc-signature" not in receiver.got[0].headers


async def test_a_test_runs_notifications_are_never_sent(
    tmp_path: Path, clock: ManualClock, receiver: Receiver, deliverers: list[Deliverer]
) -> None:
    engine = await open_engine(tmp_path, org_with(NotifyTarget(receiver.url("/h"), ("new_work",))), clock)
    try:
        run_id = (await start(engine, "chase", {}, who=MIRA, mode="test"))["run"]["id"]
        assert await deliverer_for(deliverers, engine, clock).run_once() == []
        [row] = await engine.deliveries(run_id)
    finally:
        await engine.close()
    assert (row.notification.test, summary(row)) == (True, ("test", 0, None, None, None, None))
    assert receiver.got == []


async def test_a_pending_delivery_survives_a_restart(
    tmp_path: Path, clock: ManualClock, receiver: Receiver, deliverers: list[Deliverer]
) -> None:
    org = org_with(NotifyTarget(receiver.url("/h"), ("new_work",)))
    engine = await open_engine(tmp_path, org, clock)
    try:
        run_id = (await start(engine, "chase", {}, who=MIRA))["run"]["id"]
        receiver.statuses = [502]
        [(_, result)] = await deliverer_for(deliverers, engine, clock).run_once()
        assert result.state == "pending"
    finally:
        await deliverers.pop().aclose()
        await engine.close()
    clock.advance(30)
    engine = await Engine.open(tmp_path / "data", org, clock=clock)
    try:
        [(_, result)] = await deliverer_for(deliverers, engine, clock).run_once()
        [row] = await engine.deliveries(run_id)
    finally:
        await engine.close()
    assert result.state == "delivered"
    assert summary(row) == (
        "delivered",
        2,
        None,
        "HTTP 502 Bad Gateway: busy, try later",
        "2026-10-06T09:00:30.000000Z",
        None,
    )
    assert len(receiver.got) == 2


async def test_a_claim_whose_owner_vanished_is_taken_again_when_its_lease_ends(
    tmp_path: Path, clock: ManualClock, receiver: Receiver, deliverers: list[Deliverer]
) -> None:
    engine = await open_engine(tmp_path, org_with(NotifyTarget(receiver.url("/h"), ("new_work",))), clock)
    try:
        run_id = (await start(engine, "chase", {}, who=MIRA))["run"]["id"]
        now = "2026-10-06T09:00:00.000000Z"
        [lost] = await engine.store.claim_deliveries("crashed", now, "2026-10-06T09:02:00.000000Z", 10)
        survivor = deliverer_for(deliverers, engine, clock, lease_seconds=120)
        assert await survivor.run_once() == []
        clock.advance(120)
        [(taken, result)] = await survivor.run_once()
        late = await engine.store.record_attempt(lost, "crashed", result)
        [row] = await engine.deliveries(run_id)
    finally:
        await engine.close()
    assert (lost.id, lost.attempts, taken.id, taken.attempts, result.state) == (
        taken.id,
        1,
        lost.id,
        2,
        "delivered",
    )
    assert late is False
    assert summary(row) == ("delivered", 2, None, None, "2026-10-06T09:02:00.000000Z", None)
    assert len(receiver.got) == 1


async def test_two_servers_on_one_database_deliver_each_notification_once(
    tmp_path: Path, clock: ManualClock, receiver: Receiver, deliverers: list[Deliverer]
) -> None:
    # One engine owns a SQLite data folder (its lock); the second server's deliverer is a second store
    # on the same database file, which is all a deliverer uses.
    org = org_with(NotifyTarget(receiver.url("/h"), ("new_work",)))
    engine = await open_engine(tmp_path, org, clock)
    try:
        other = await SqliteStore.open(tmp_path / "data" / "engine.db")
        try:
            runs = [(await start(engine, "chase", {}, who=MIRA))["run"]["id"] for _ in range(24)]
            a = deliverer_for(deliverers, engine, clock, batch=5)
            b = Deliverer(other, org.notify, clock, policy=RetryPolicy(batch=5))
            deliverers.append(b)
            rounds = [await asyncio.gather(a.run_once(), b.run_once()) for _ in range(4)]
            rows = await other.deliveries()
        finally:
            await deliverers.pop().aclose()
            await other.close()
    finally:
        await engine.close()
    by_a = [d.notification.run_id for round_ in rounds for d, _ in round_[0]]
    by_b = [d.notification.run_id for round_ in rounds for d, _ in round_[1]]
    assert sorted(by_a + by_b) == sorted(runs)
    assert by_a and by_b, "both servers took a share"
    assert [(d.state, d.attempts) for d in rows] == [("delivered", 1)] * 24
    sent = [json.loads(r.body)["run"]["id"] for r in receiver.got]
    assert sorted(sent) == sorted(runs)


async def test_a_receiver_that_hangs_holds_up_no_tool_call(
    tmp_path: Path, clock: ManualClock, receiver: Receiver, deliverers: list[Deliverer]
) -> None:
    engine = await open_engine(tmp_path, org_with(NotifyTarget(receiver.url("/h"), ("new_work",))), clock)
    try:
        await start(engine, "chase", {}, who=MIRA)
        receiver.hold = asyncio.Event()
        in_flight = asyncio.create_task(deliverer_for(deliverers, engine, clock).run_once())
        while not receiver.got:
            await asyncio.sleep(0.01)
        second = (await start(engine, "chase", {}, who=MIRA))["run"]["id"]
        work = ok(await call(engine, MIRA, "get_work"), "get_work")["items"]
        assert not in_flight.done()
        receiver.hold.set()
        [(_, result)] = await in_flight
    finally:
        await engine.close()
    assert second in [item["runId"] for item in work]
    assert result.state == "delivered"
