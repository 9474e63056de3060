"""The SQLite writer's memory of runs and its COMMITs: a write finds the run as the last write left it
without reading it again, never a change the database does not hold (a request rolled back, a batch
that failed, another connection's commit); a quick COMMIT runs on the event loop's thread and a slow
one on the writer's; checkpoints run beside the writes, never inside a COMMIT."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from engine.core import Engine
from engine.runtime import derive
from engine.runtime.machine import Machine
from engine.store.base import DerivedRows, Transaction
from engine.store.sqlite import SqliteStore
from engine.store.sqlite import writer as sqlite_writer
from engine.store.state import Run
from engine.tools import context
from tests.engine.engine_support import SCREENER, THREE_AGENTS, call, claim, ok, publish, start


async def set_meta(tx: Transaction) -> None:
    await tx.set_meta("k", "v")


def sqlite_store(engine: Engine) -> SqliteStore:
    assert isinstance(engine.store, SqliteStore)
    return engine.store


def statements(engine: Engine) -> list[str]:
    """Every statement the writer runs from now on."""
    conn = sqlite_store(engine)._w
    assert conn is not None
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    return seen


async def test_a_write_reads_its_run_from_the_last_write_not_from_sqlite(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    seen = statements(engine)
    token = (await claim(engine, run_id, "one"))["token"]
    ok(await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "submit")
    assert not [s for s in seen if s.startswith("SELECT") and ("FROM runs" in s or "FROM run_steps" in s)]
    view = ok(await call(engine, SCREENER, "get_run", runId=run_id), "get_run")
    assert view["data"]["steps"]["one"]["output"] == {"note": "n"}


async def test_a_write_takes_the_index_rows_the_last_write_saved_without_deriving_them_again(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    derived: list[str] = []
    original = derive.derive

    def counted(machine: Machine) -> DerivedRows:
        derived.append(machine.run.id)
        return original(machine)

    monkeypatch.setattr(context, "derive", counted)  # the name `loaded_rows` and `save` call
    token = (await claim(engine, run_id, "one"))["token"]
    assert derived == [run_id], "derived once, for the save: the rows before are those start_run wrote"
    writer = sqlite_store(engine)._writer
    assert writer is not None
    writer._cache.check(-1)  # as after another connection's commit: forgotten
    ok(await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "submit")
    assert derived == [run_id] * 3, "read from SQLite: its rows derived when opened, and for the save"


async def test_a_request_rolled_back_leaves_the_run_as_the_database_holds_it(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]

    async def changes_then_fails(tx: Transaction) -> None:
        run = await tx.get_run(run_id)
        assert run is not None
        run.state = "cancelled"
        run.data = {**run.data, "one": {"output": {"note": "never"}, "history": []}}
        await tx.save_run(run, DerivedRows([], [], []))
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        await engine.store.write(changes_then_fails)
    view = ok(await call(engine, SCREENER, "get_run", runId=run_id), "get_run")
    assert (view["run"]["state"], view["data"]["steps"]) == ("active", {})
    token = (await claim(engine, run_id, "one"))["token"]  # the write sees the run as it is stored
    done = ok(
        await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "submit"
    )
    assert (done["run"]["state"], list(done["data"]["steps"])) == ("active", ["one"])


async def test_a_batch_whose_commit_fails_leaves_no_trace_in_memory(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    writer = sqlite_store(engine)._writer
    assert writer is not None
    original = writer._commit

    async def broken() -> None:
        raise OSError("disk I/O error")

    monkeypatch.setattr(writer, "_commit", broken)
    failed = await call(engine, SCREENER, "claim", runId=run_id, stepId="one")
    assert failed["ok"] is False and failed["error"]["code"] == "retry"
    monkeypatch.setattr(writer, "_commit", original)
    claimed = await claim(engine, run_id, "one")  # not `conflict`: the failed claim is nowhere
    assert claimed["step"]["id"] == "one"


async def test_another_connections_commit_empties_the_memory(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    other = sqlite3.connect(tmp_path / "data" / "engine.db", isolation_level=None)
    try:
        other.execute("PRAGMA busy_timeout=5000")
        other.execute("UPDATE runs SET doc = json_set(doc, '$.inputs.ticket', 'T-2') WHERE id = ?", (run_id,))
    finally:
        other.close()
    claimed = await claim(engine, run_id, "one")
    assert claimed["data"]["inputs"] == {"ticket": "T-2"}


async def test_a_quick_commit_runs_on_the_loop_and_a_slow_one_on_the_writers_thread(
    store: SqliteStore,
) -> None:
    writer, conn = store._writer, store._w
    assert writer is not None and conn is not None
    threads: list[str] = []
    conn.set_trace_callback(
        lambda sql: threads.append(threading.current_thread().name) if sql == "COMMIT" else None
    )
    writer._commit_ms = 0.0
    await store.write(set_meta)
    writer._commit_ms = 10 * sqlite_writer.INLINE_COMMIT_MS  # as after slow commits
    await store.write(set_meta)
    assert threads[0] == threading.current_thread().name
    assert threads[1].startswith("sqlite-writer")


async def test_checkpoints_run_beside_the_writes_every_so_many_requests(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_writer, "CHECKPOINT_EVERY", 4)
    writer, conn, checkpointer = store._writer, store._w, store._checkpointer
    assert writer is not None and conn is not None and checkpointer is not None
    checkpoints: list[str] = []
    checkpointer.set_trace_callback(checkpoints.append)
    writes: list[str] = []
    conn.set_trace_callback(writes.append)
    for round in (1, 2):
        for _ in range(4):
            await store.write(set_meta)
        assert writer._checkpoint is not None
        await writer._checkpoint
        assert checkpoints == ["PRAGMA wal_checkpoint(PASSIVE)"] * round
    # The next write first copies what was committed since, between two transactions (never inside a
    # COMMIT: SQLite's own is off), so its transaction starts the WAL over: it holds that write alone.
    await store.write(set_meta)
    catch_ups = [n for n, sql in enumerate(writes) if "checkpoint" in sql]
    assert len(catch_ups) == 2
    assert [(writes[n - 1], writes[n + 1]) for n in catch_ups] == [("COMMIT", "BEGIN IMMEDIATE")] * 2
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    # The WAL's frames now: the two pages of that one write (the ten before it would be twenty more).
    assert checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone() == (0, 2, 2)


async def test_a_write_takes_the_run_object_the_last_write_saved_and_a_callers_edit_stays_out(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    started = await start(engine, "three-agents", {"ticket": "T-1"})
    run_id = started["run"]["id"]
    built: list[str] = []
    from_json = Run.from_json

    def counted(text: str) -> Run:
        built.append(text)
        return from_json(text)

    monkeypatch.setattr(Run, "from_json", counted)
    claimed = await claim(engine, run_id, "one")
    claimed_view = ok(await call(engine, SCREENER, "get_run", runId=run_id), "get_run")
    built.clear()  # the read above built its own from the read connection's row
    started["data"]["inputs"]["ticket"] = "edited by the caller"
    claimed_view["data"]["inputs"]["ticket"] = "edited by the caller"
    done = ok(
        await call(engine, SCREENER, "submit", token=claimed["token"], output={"note": "n"}, summary="s"),
        "submit",
    )
    assert built == []  # neither the claim nor the submit parsed the run's document
    assert done["data"]["inputs"] == {"ticket": "T-1"}
    view = ok(await call(engine, SCREENER, "get_run", runId=run_id), "get_run")
    assert view["data"]["inputs"] == {"ticket": "T-1"}


async def test_a_caller_that_edits_a_write_result_changes_nothing_the_engine_keeps(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    done = ok(
        await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "submit"
    )
    done["data"]["steps"]["one"]["output"]["note"] = "edited"
    done["data"]["steps"]["one"]["summary"] = "edited"
    done["data"]["inputs"]["ticket"] = "edited"
    claimed = await claim(engine, run_id, "two")  # the next write starts from the writer's memory
    assert claimed["data"]["steps"]["one"]["output"] == {"note": "n"}
    assert claimed["data"]["inputs"] == {"ticket": "T-1"}
    claimed["data"]["steps"]["one"]["output"]["note"] = "edited again"
    second = ok(
        await call(engine, SCREENER, "submit", token=claimed["token"], output={"note": "m"}, summary="t"),
        "submit",
    )
    assert second["data"]["steps"]["one"]["output"] == {"note": "n"}
    assert second["data"]["steps"]["one"]["summary"] == "s"
    view = ok(await call(engine, SCREENER, "get_run", runId=run_id), "get_run")
    assert view["data"] == second["data"]


LISTS = """
---
name: lists
description: A list in, a list out.
inputs:
  tags: list
steps:
  - id: one
    agent: Do it.
    output: { items: list }
  - id: two
    agent: Then this.
    output: { items: list }
  - id: done
    finish: finished
---
"""


async def test_a_caller_that_edits_its_arguments_after_the_call_changes_nothing_the_engine_keeps(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, LISTS)
    inputs = {"tags": [{"name": "a"}]}
    run_id = (await start(engine, "lists", inputs))["run"]["id"]
    inputs["tags"][0]["name"] = "edited"
    token = (await claim(engine, run_id, "one"))["token"]
    output = {"items": [{"n": 1}]}
    ok(await call(engine, SCREENER, "submit", token=token, output=output, summary="s"), "submit")
    output["items"][0]["n"] = 2
    claimed = await claim(engine, run_id, "two")  # from the writer's memory
    assert claimed["data"]["inputs"] == {"tags": [{"name": "a"}]}
    assert claimed["data"]["steps"]["one"]["output"] == {"items": [{"n": 1}]}
    view = ok(await call(engine, SCREENER, "get_run", runId=run_id), "get_run")
    assert view["data"] == claimed["data"]
