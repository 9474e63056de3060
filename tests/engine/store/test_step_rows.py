"""Schema 5: each step's run data is a row of its own, so a write rewrites only the steps it changed
(a renew none, a submit its own), and a store from before moves its run data into those rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.clock import ManualClock
from engine.core import Engine
from engine.store.sqlite import SqliteStore
from tests.engine.engine_support import (
    MIRA,
    SCREENER,
    THREE_AGENTS,
    call,
    claim,
    make_org,
    ok,
    publish,
    start,
)
from tests.engine.store.old_schema import as_schema

BIG = "x" * 100_000


def statements(engine: Engine) -> list[str]:
    """Every statement the writer runs from now on, with its parameters filled in."""
    assert isinstance(engine.store, SqliteStore) and engine.store._w is not None
    seen: list[str] = []
    engine.store._w.set_trace_callback(seen.append)
    return seen


async def test_a_write_rewrites_only_the_step_data_it_changed(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    first = await claim(engine, run_id, "one")
    done = await call(engine, SCREENER, "submit", token=first["token"], output={"note": BIG}, summary="s")
    ok(done, "submit")
    second = await claim(engine, run_id, "two")

    seen = statements(engine)
    renewed = ok(await call(engine, SCREENER, "renew", token=second["token"], progress="half"), "renew")
    assert not [s for s in seen if "run_steps" in s and not s.lstrip().startswith("SELECT")]
    assert all(len(s) < 10_000 for s in seen)  # the 100 KB of step one is read, never written

    seen.clear()
    ok(
        await call(engine, SCREENER, "submit", token=renewed["token"], output={"note": "two"}, summary="s"),
        "submit",
    )
    written = [s for s in seen if s.startswith(("INSERT INTO run_steps", "UPDATE run_steps"))]
    assert len(written) == 1 and '"note":"two"' in written[0] and BIG not in written[0]

    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert {sid: step["output"] for sid, step in view["data"]["steps"].items()} == {
        "one": {"note": BIG},
        "two": {"note": "two"},
    }


async def test_a_store_from_before_schema_5_moves_run_data_into_rows(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
        token = (await claim(engine, run_id, "one"))["token"]
        ok(await call(engine, SCREENER, "submit", token=token, output={"note": "n1"}, summary="s"), "submit")
        before = await engine.store.get_run(run_id)
    finally:
        await engine.close()
    assert before is not None and set(before.data) == {"one"}
    as_schema(data / "engine.db", 4)  # run data inside the document, no run_steps
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        assert await engine.store.get_run(run_id) == before
    finally:
        await engine.close()
    db = sqlite3.connect(data / "engine.db")
    try:
        assert db.execute("SELECT json_type(doc, '$.data') FROM runs").fetchall() == [(None,)]
        assert db.execute("SELECT step_id FROM run_steps").fetchall() == [("one",)]
    finally:
        db.close()


async def test_step_data_keeps_the_order_it_came_in(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    for step in ("one", "two", "three"):
        token = (await claim(engine, run_id, step))["token"]
        ok(await call(engine, SCREENER, "submit", token=token, output={"note": step}, summary="s"), "submit")
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert list(view["data"]["steps"]) == ["one", "two", "three"]  # not sorted by name: "three" < "two"
    run = await engine.store.get_run(run_id)
    assert run is not None and list(run.data) == ["one", "two", "three"]
