"""A leap second (`:60`, RFC 3339 §5.6, allowed at the end of a month in UTC) is a datetime wherever
one is taken: inputs at start, an output at submit, the value a `wait_until` waits for (which ends with
that second, at the next one), and event data, which is kept as written (spec §2.3)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import (
    MIRA,
    SCREENER,
    call,
    claim,
    err,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores

LEAP = """
---
name: leap
description: A datetime in, a datetime out, a wait until the one that came out, then an event.
inputs:
  at: datetime
steps:
  - id: stamp
    agent: Write the release time.
    output: { releaseAt: datetime }
  - id: hold
    wait_until: steps.stamp.output.releaseAt
  - id: signal
    wait_for: settled
  - id: done
    finish: done
---
"""

INSERTED = "2016-12-31T23:59:60Z"
"""The last leap second inserted so far."""
MONTH_END = "2026-10-31T23:59:60Z"
"""A leap second RFC 3339 allows at the end of the test clock's month (none is scheduled there)."""


async def test_a_leap_second_is_an_input_an_output_a_wait_and_event_data(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, LEAP)
    view = await start(engine, "leap", {"at": INSERTED})
    run_id = view["run"]["id"]
    assert view["data"]["inputs"] == {"at": INSERTED}
    token = (await claim(engine, run_id, "stamp"))["token"]
    reply = await call(engine, SCREENER, "submit", token=token, output={"releaseAt": MONTH_END}, summary="s")
    assert step_states(ok(reply, "submit"))["hold"] == "waiting"

    clock.set(datetime(2026, 10, 31, 23, 59, 59, 999999, tzinfo=UTC))
    await engine.tick()
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view)["hold"] == "waiting"
    clock.advance(0.000001)
    await engine.tick()
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["data"]["steps"]["hold"] == {"by": "server", "at": "2026-11-01T00:00:00Z", "history": []}
    assert step_states(view)["signal"] == "waiting"

    data = {"settledAt": INSERTED}
    reply = await call(engine, SCREENER, "send_event", runId=run_id, name="settled", data=data)
    assert ok(reply, "send_event") == {"consumedBy": "signal"}
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["data"]["steps"]["signal"]["output"] == data
    assert view["run"]["outcome"] == "done"


@pytest.mark.parametrize(
    "written",
    [
        "2016-12-31T23:59:61Z",
        "2016-12-31T23:58:60Z",
        "2016-12-30T23:59:60Z",
        "2016-12-31T23:59:60+01:00",
    ],
    ids=["second-61", "not-the-last-minute", "not-a-month-end", "not-a-month-end-in-utc"],
)
async def test_a_second_60_where_no_leap_second_can_be_is_refused(
    engine: Engine, tmp_path: Path, written: str
) -> None:
    await publish(engine, tmp_path, LEAP)
    reply = await call(engine, SCREENER, "start_run", process="leap", inputs={"at": written})
    err(reply, "invalid", ["inputs.at: expected datetime (RFC 3339 with an offset)"])


async def test_year_0000_is_a_datetime_and_a_wait_until_it_continues_at_once(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, LEAP)
    run_id = (await start(engine, "leap", {"at": "0000-01-01T00:00:00+01:00"}))["run"]["id"]
    token = (await claim(engine, run_id, "stamp"))["token"]
    output = {"releaseAt": "0000-02-29T12:00:00Z"}
    view = ok(await call(engine, SCREENER, "submit", token=token, output=output, summary="s"), "submit")
    assert view["data"]["steps"]["stamp"]["output"] == output
    assert (step_states(view)["hold"], step_states(view)["signal"]) == ("done", "waiting")
