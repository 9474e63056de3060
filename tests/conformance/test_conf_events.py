"""Events (spec §3.6, §3.1 `by`/`at`; tools.md `send_event`).

Held per run, consumed when the `wait_for` becomes ready, one wait per delivery, same-name events
oldest first, `data` as the wait's `output`, the sender as `by`. `at` is "when" the step completed
(§3.1 defines `by` specially for a `wait_for`, not `at`): for a held event that is the moment the
wait became ready and consumed it, never a moment before the step was even reached.
"""

from __future__ import annotations

from tests.conformance.conformance_support import AGENT, AGENT2, OPS, SETTLEMENT, Server, states


async def _settlement(server: Server) -> str:
    await server.publish(SETTLEMENT, {})
    return (await server.start("settlement", {"ref": "S-1"}))["run"]["id"]


async def _request(server: Server, run_id: str) -> dict:
    claimed = await server.claim(run_id, "request")
    return await server.ok(AGENT, "submit", token=claimed["token"], output={"sent": True}, summary="Sent.")


async def test_an_event_for_a_ready_wait_is_consumed_at_once(server: Server) -> None:
    run_id = await _settlement(server)
    view = await _request(server, run_id)
    assert states(view)["first_payment"] == "waiting" and view["run"]["state"] == "waiting"
    before = (await server.view(run_id))["data"]
    server.clock.advance(minutes=7)
    assert await server.ok(AGENT2, "send_event", runId=run_id, name="payment", data={"amount": 10}) == {
        "consumedBy": "first_payment"
    }
    view = await server.view(run_id)
    assert view["data"]["steps"]["first_payment"] == {
        "output": {"amount": 10},
        "by": AGENT2.id,
        "at": "2026-10-06T09:07:00Z",
        "history": [],
    }
    assert states(view)["second_payment"] == "waiting"
    assert before != view["data"]


async def test_held_events_are_consumed_oldest_first_one_per_wait(server: Server) -> None:
    run_id = await _settlement(server)
    server.clock.advance(minutes=1)
    assert await server.ok(AGENT, "send_event", runId=run_id, name="payment", data={"n": 1}) == {
        "consumedBy": None
    }
    server.clock.advance(minutes=1)
    assert await server.ok(OPS, "send_event", runId=run_id, name="payment", data={"n": 2}) == {
        "consumedBy": None
    }
    assert (await server.view(run_id))["data"]["steps"] == {}
    server.clock.advance(minutes=8)
    view = await _request(server, run_id)
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "settled")
    steps = view["data"]["steps"]
    assert (steps["first_payment"]["output"], steps["first_payment"]["by"]) == ({"n": 1}, AGENT.id)
    assert (steps["second_payment"]["output"], steps["second_payment"]["by"]) == ({"n": 2}, OPS.id)
    assert states(view) == {
        "request": "done",
        "first_payment": "done",
        "second_payment": "done",
        "chase": None,
        "settled": "done",
    }


async def test_a_held_event_records_when_the_wait_completed(server: Server) -> None:
    run_id = await _settlement(server)
    server.clock.advance(minutes=1)
    await server.ok(AGENT, "send_event", runId=run_id, name="payment", data={"n": 1})
    server.clock.advance(minutes=9)
    view = await _request(server, run_id)
    record = view["data"]["steps"]["first_payment"]
    assert record["at"] == view["data"]["steps"]["request"]["at"] == "2026-10-06T09:10:00Z", record


async def test_each_delivery_satisfies_one_wait(server: Server) -> None:
    run_id = await _settlement(server)
    await server.ok(AGENT, "send_event", runId=run_id, name="payment", data={"n": 1})
    view = await _request(server, run_id)
    assert states(view)["first_payment"] == "done"
    assert states(view)["second_payment"] == "waiting"
    assert await server.ok(AGENT, "send_event", runId=run_id, name="payment") == {
        "consumedBy": "second_payment"
    }


async def test_an_event_without_a_matching_wait_is_held_and_changes_nothing(server: Server) -> None:
    run_id = await _settlement(server)
    await _request(server, run_id)
    before = await server.view(run_id)
    for name in ("refund", "payments"):
        assert await server.ok(AGENT, "send_event", runId=run_id, name=name, data={"x": 1}) == {
            "consumedBy": None
        }
    after = await server.view(run_id)
    assert after["data"] == before["data"] and after["steps"] == before["steps"]


async def test_event_names_follow_the_step_id_pattern(server: Server) -> None:
    run_id = await _settlement(server)
    for name in ("Payment", "1payment", "pay ment", "", "p" * 65):
        await server.refused(AGENT, "send_event", "invalid", runId=run_id, name=name)


async def test_a_timed_out_wait_continues_at_on_timeout_and_no_longer_takes_its_event(server: Server) -> None:
    """The timeout passed before the event arrived, so the event cannot satisfy that wait, even if the
    server's timer loop has not run yet (the write sees the clock)."""
    run_id = await _settlement(server)
    await _request(server, run_id)
    server.clock.advance(days=2, seconds=1)
    assert await server.ok(AGENT, "send_event", runId=run_id, name="payment", data={"late": True}) == {
        "consumedBy": None
    }
    view = await server.view(run_id)
    assert states(view) == {
        "request": "done",
        "first_payment": "done",
        "second_payment": None,
        "chase": "ready",
        "settled": None,
    }
    assert set(view["data"]["steps"]["first_payment"]) == {"by", "at", "history"}
    assert view["data"]["steps"]["first_payment"]["by"] == "server"


async def test_a_timeout_applies_through_the_timer_loop(server: Server) -> None:
    run_id = await _settlement(server)
    await _request(server, run_id)
    await server.advance(days=2)
    view = await server.view(run_id)
    assert states(view)["chase"] == "ready"
    assert view["data"]["steps"]["first_payment"] == {
        "by": "server",
        "at": "2026-10-08T09:00:00Z",
        "history": [],
    }
    assert [i["stepId"] for i in (await server.ok(AGENT, "get_work"))["items"]] == ["chase"]


async def test_events_are_held_per_run(server: Server) -> None:
    first = await _settlement(server)
    second = (await server.start("settlement", {"ref": "S-2"}))["run"]["id"]
    await _request(server, first)
    await _request(server, second)
    assert await server.ok(AGENT, "send_event", runId=first, name="payment") == {
        "consumedBy": "first_payment"
    }
    assert states(await server.view(second))["first_payment"] == "waiting"
