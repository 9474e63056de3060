"""list_runs: filters on process, state and input equality; opaque cursor paging, newest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import (
    LENA,
    MIRA,
    OPS,
    SCREENER,
    SCREENING,
    THREE_AGENTS,
    call,
    err,
    ok,
    publish,
    start,
)

pytestmark = pytest.mark.both_stores


async def test_list_runs_filters_and_pages(engine: Engine, tmp_path: Path, clock: ManualClock) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    await publish(engine, tmp_path, SCREENING, {"finance-approver": "g_finance"})
    ids = []
    for ticket in ("A", "B", "A"):
        ids.append((await start(engine, "three-agents", {"ticket": ticket}))["run"]["id"])
        clock.advance(60)
    screening = (await start(engine, "screening", {"vendorName": "Acme", "amount": 48000}))["run"]["id"]
    ok(await call(engine, OPS, "cancel", runId=ids[1], reason="r"), "cancel")

    everything = ok(await call(engine, LENA, "list_runs"), "list_runs")
    assert [i["id"] for i in everything["items"]] == [screening, ids[2], ids[1], ids[0]]
    assert everything["items"][3] == {
        "id": ids[0],
        "process": "three-agents",
        "version": 1,
        "state": "active",
        "outcome": None,
        "startedAt": "2026-10-06T09:00:00Z",
        "updatedAt": "2026-10-06T09:00:00Z",
        "inputs": {"ticket": "A"},
    }
    by_input = ok(await call(engine, MIRA, "list_runs", inputs={"ticket": "A"}), "list_runs")
    assert [i["id"] for i in by_input["items"]] == [ids[2], ids[0]]
    number = ok(await call(engine, MIRA, "list_runs", inputs={"amount": 48000.0}), "list_runs")
    assert [i["id"] for i in number["items"]] == [screening]
    cancelled = ok(await call(engine, MIRA, "list_runs", state="cancelled"), "list_runs")
    assert [i["id"] for i in cancelled["items"]] == [ids[1]]
    active = ok(
        await call(engine, SCREENER, "list_runs", process="three-agents", state="active"), "list_runs"
    )
    assert [i["id"] for i in active["items"]] == [ids[2], ids[0]]

    first = ok(await call(engine, MIRA, "list_runs", limit=2), "list_runs")
    assert [i["id"] for i in first["items"]] == [screening, ids[2]]
    second = ok(await call(engine, MIRA, "list_runs", limit=2, cursor=first["nextCursor"]), "list_runs")
    assert [i["id"] for i in second["items"]] == [ids[1], ids[0]]
    assert second["nextCursor"] is None
    err(await call(engine, MIRA, "list_runs", cursor="bm9wZQ"), "invalid", ["cursor: not valid"])
    err(
        await call(engine, MIRA, "list_runs", state="done"),
        "invalid",
        ["state: expected one of active, waiting, ended, cancelled"],
    )
