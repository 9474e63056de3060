"""Timers applied at their due time, which only an in-process test can see (spec §2.2, §3.1, §3.6).

`apc conform` checks waits, wait_until, timeouts and due over the wire on a sped-up clock (the
`time` group); what it cannot see is when exactly the server applied a timer, or that a write sees
the clock before the timer loop has run. Here the clock is moved by hand: a timer is stamped at its
due time, to the second, whenever the tick or the write that applies it comes.
"""

from __future__ import annotations

import pytest

from tests.conformance.conformance_support import AGENT, SETTLEMENT, TIMED, Server, states

pytestmark = pytest.mark.both_stores


async def _settlement(server: Server) -> str:
    await server.publish(SETTLEMENT, {})
    return (await server.start("settlement", {"ref": "S-1"}))["run"]["id"]


async def _request(server: Server, run_id: str) -> dict:
    claimed = await server.claim(run_id, "request")
    return await server.ok(AGENT, "submit", token=claimed["token"], output={"sent": True}, summary="Sent.")


async def test_waits_record_the_server_and_a_missing_wait_until_value_fails_the_run(server: Server) -> None:
    await server.publish(TIMED, {})
    released = await server.start("timed-release", {"releaseAt": "2026-10-06T09:30:00+00:00"})
    missing = await server.start("timed-release", {})
    assert states(released) == {"pause": "waiting", "hold": None, "done": None}
    assert released["run"]["state"] == "waiting"
    await server.advance(hours=1)
    view = await server.view(released["run"]["id"])
    assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "released")
    assert view["data"]["steps"] == {
        "pause": {"by": "server", "at": "2026-10-06T10:00:00Z", "history": []},
        "hold": {"by": "server", "at": "2026-10-06T10:00:00Z", "history": []},
    }
    failed = await server.view(missing["run"]["id"])
    assert (failed["run"]["state"], failed["run"]["outcome"]) == ("ended", "failed")
    assert failed["run"]["ended"]["by"] == "server" and failed["run"]["ended"]["note"]
    assert states(failed) == {"pause": "done", "hold": "failed", "done": None}
    assert failed["data"]["steps"]["hold"]["by"] == "server"


async def test_wait_until_honours_the_datetime_offset(server: Server) -> None:
    await server.publish(TIMED, {})
    view = await server.start("timed-release", {"releaseAt": "2026-10-06T13:00:00+02:00"})
    run_id = view["run"]["id"]
    await server.advance(hours=1)
    assert states(await server.view(run_id)) == {"pause": "done", "hold": "waiting", "done": None}
    await server.advance(minutes=59)
    assert states(await server.view(run_id))["hold"] == "waiting"
    await server.advance(minutes=1)
    done = await server.view(run_id)
    assert (done["run"]["outcome"], done["data"]["steps"]["hold"]["at"]) == (
        "released",
        "2026-10-06T11:00:00Z",
    )


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
