"""The run log: an entry for every kind of event, written with the change it records (one insert per
write at most), read back the same after a restart, bounded per run; `apc_run_log` pages it and its
result matches the project's own schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity
from engine.store.base import LOG_KINDS
from engine.store.runlog import HEAD, RING, slot
from engine.store.sqlite import SqliteStore
from engine.tools.run_log import result_schema
from tests.engine.engine_support import (
    MIRA,
    OPS,
    SCREENER,
    call,
    claim,
    err,
    make_org,
    ok,
    publish,
    start,
)
from tests.engine.evaluator.engine_check_support import checked, judge
from tests.engine.evaluator.test_check_unsure import held

__all__ = ["checked", "judge"]

LOGGED = """
---
name: logged
description: Every kind of event once.
steps:
  - id: work
    agent: Do the work.
    output: { note: string }
  - id: approve
    person: finance-approver
    approve: Approve the work.
    due: 1h
    on_reject: work
    next: pause
  - id: pause
    wait: 1h
  - id: signal
    wait_for: go
  - id: late
    wait_for: never
    timeout: 30m
    on_timeout: done
  - id: done
    finish: done
---

Logged.
"""

SCHEMA = Draft202012Validator(result_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


async def log_of(engine: Engine, run_id: str, who: Identity = OPS, **extra: Any) -> dict[str, Any]:
    data = ok_log(await engine.run_log(who, {"runId": run_id, **extra}))
    return data


def ok_log(envelope: dict[str, Any]) -> dict[str, Any]:
    assert envelope["ok"] is True, envelope
    problems = [f"{list(e.path)}: {e.message}" for e in SCHEMA.iter_errors(envelope["data"])]
    assert problems == []
    data: dict[str, Any] = envelope["data"]
    return data


def rows(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(kind, stepId, by, count) of every entry."""
    return [(e["kind"], e["stepId"], e["by"], e["count"]) for e in data["entries"]]


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """Every SQL statement the engine's writer connection runs meanwhile (SQLite; on PostgreSQL none
    are traced and the list stays empty)."""
    seen: list[str] = []
    store = engine.store
    if not isinstance(store, SqliteStore):
        yield seen
        return
    conn = store._w
    assert conn is not None
    conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        conn.set_trace_callback(None)


async def drive(engine: Engine, clock: ManualClock, tmp_path: Path, writes: list[list[str]]) -> str:
    """A run through every kind of event but cancel and check; each write's SQL appended to `writes`."""
    await publish(engine, tmp_path, LOGGED, {"finance-approver": "g_finance"})

    async def w(who: Identity, tool: str, **arguments: Any) -> dict[str, Any]:
        with statements(engine) as seen:
            reply = await call(engine, who, tool, **arguments)
        writes.append(seen)
        return reply

    async def tick(**delta: float) -> None:
        clock.advance(**delta)
        with statements(engine) as seen:
            await engine.tick()
        writes.append(seen)

    run_id = ok(await w(SCREENER, "start_run", process="logged", inputs={}), "start_run")["run"]["id"]
    token = ok(await w(SCREENER, "claim", runId=run_id, stepId="work"), "claim")["token"]
    for progress in ("half way", "nearly"):
        token = ok(await w(SCREENER, "renew", token=token, progress=progress), "renew")["token"]
    for _ in range(2):
        err(await w(SCREENER, "submit", token=token, output={}, summary="Tried."), "not_accepted")
    view = ok(await w(SCREENER, "escalate", token=token, note="The scope is unclear."), "escalate")
    [item] = view["workItems"]
    decision = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
    ok(await w(OPS, "decide", **decision, decision="returned", note="Scope: the EU only."), "decide")
    ok(await w(SCREENER, "claim", runId=run_id, stepId="work"), "claim")
    await tick(minutes=11)
    token = ok(await w(SCREENER, "claim", runId=run_id, stepId="work"), "claim")["token"]
    view = ok(await w(SCREENER, "submit", token=token, output={"note": "v1"}, summary="First."), "submit")
    await tick(hours=2)
    [item] = view["workItems"]
    decision = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
    ok(await w(MIRA, "decide", **decision, decision="rejected", note="Add the UK."), "decide")
    token = ok(await w(SCREENER, "claim", runId=run_id, stepId="work"), "claim")["token"]
    view = ok(await w(SCREENER, "submit", token=token, output={"note": "v2"}, summary="Second."), "submit")
    [item] = view["workItems"]
    decision = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
    ok(await w(MIRA, "decide", **decision, decision="approved"), "decide")
    await tick(hours=1)
    ok(await w(OPS, "send_event", runId=run_id, name="stray", data={}), "send_event")
    ok(await w(SCREENER, "send_event", runId=run_id, name="go", data={"ref": "G1"}), "send_event")
    await tick(minutes=30)
    return run_id


EXPECTED = [
    ("run_started", None, "a_screener", 1),
    ("step_ready", "work", None, 1),
    ("claimed", "work", "a_screener", 1),
    ("renewed", "work", "a_screener", 2),
    ("submission_refused", "work", "a_screener", 2),
    ("escalated", "work", "a_screener", 1),
    ("returned", "work", "ops@example.com", 1),
    ("claimed", "work", "a_screener", 1),
    ("timed_out", "work", None, 1),
    ("claimed", "work", "a_screener", 1),
    ("submitted", "work", "a_screener", 1),
    ("step_ready", "approve", None, 1),
    ("overdue", "approve", None, 1),
    ("decided", "approve", "mira@example.com", 1),
    ("rework", "approve", "mira@example.com", 1),
    ("step_ready", "work", None, 1),
    ("claimed", "work", "a_screener", 1),
    ("submitted", "work", "a_screener", 1),
    ("step_ready", "approve", None, 1),
    ("decided", "approve", "mira@example.com", 1),
    ("wait_started", "pause", None, 1),
    ("wait_ended", "pause", None, 1),
    ("wait_started", "signal", None, 1),
    ("event_received", None, "ops@example.com", 1),
    ("event_received", "signal", "a_screener", 1),
    ("wait_ended", "signal", "a_screener", 1),
    ("wait_started", "late", None, 1),
    ("timed_out", "late", None, 1),
    ("ended", None, None, 1),
]


@pytest.mark.both_stores
async def test_a_run_logs_every_event_in_order_with_its_facts(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    run_id = await drive(engine, clock, tmp_path, [])
    data = await log_of(engine, run_id)
    assert rows(data) == EXPECTED
    assert data["nextCursor"] is None
    entries = data["entries"]
    assert [e["seq"] for e in entries] == list(range(1, len(EXPECTED) + 1))
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        by_kind.setdefault(e["kind"], []).append(e)
    assert by_kind["run_started"][0]["detail"] == {"inputs": {}, "mode": "live"}
    assert by_kind["run_started"][0]["at"] == "2026-10-06T09:00:00Z"
    assert by_kind["claimed"][0]["detail"] == {"leaseUntil": "2026-10-06T09:10:00Z", "progress": None}
    renewed = by_kind["renewed"][0]
    assert renewed["detail"] == {
        "leaseUntil": "2026-10-06T09:10:00Z",
        "progress": "nearly",
        "lastAt": "2026-10-06T09:00:00Z",
    }
    refused = by_kind["submission_refused"][0]
    assert refused["detail"]["issues"] == ["output.note: missing"]
    assert by_kind["escalated"][0]["note"] == "The scope is unclear."
    assert by_kind["returned"][0]["note"] == "Scope: the EU only."
    lapse = by_kind["timed_out"][0]
    assert (lapse["at"], lapse["detail"]) == (
        "2026-10-06T09:10:00Z",
        {"timer": "lease", "agent": "a_screener", "leaseUntil": "2026-10-06T09:10:00Z", "progress": None},
    )
    first = by_kind["submitted"][0]
    assert (first["note"], first["detail"]) == (
        "First.",
        {"outputFields": ["note"], "evidence": 0, "next": None},
    )
    assert by_kind["overdue"][0]["detail"] == {"due": "2026-10-06T10:11:00Z"}
    assert by_kind["overdue"][0]["at"] == "2026-10-06T10:11:00Z"
    rejected, approved = by_kind["decided"]
    assert (rejected["note"], rejected["detail"]["decision"]) == ("Add the UK.", "rejected")
    assert (approved["note"], approved["detail"]["decision"]) == (None, "approved")
    assert by_kind["rework"][0]["detail"] == {"to": "work"}
    assert by_kind["wait_started"][0]["detail"] == {"until": "2026-10-06T12:11:00Z"}
    stray, went = by_kind["event_received"]
    assert (stray["detail"], went["detail"]) == (
        {"event": "stray", "held": True},
        {"event": "go", "held": False},
    )
    assert by_kind["timed_out"][1]["detail"] == {"timer": "wait_for", "next": "done"}
    assert by_kind["ended"][0]["detail"] == {"outcome": "done"}
    text = json.dumps(entries)
    assert "token" not in text.lower()


async def test_each_write_adds_at_most_one_log_insert(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    writes: list[list[str]] = []
    await drive(engine, clock, tmp_path, writes)
    assert len(writes) == 21
    touching = [[s for s in seen if "run_log" in s] for seen in writes]
    assert all(len(t) <= 1 for t in touching), touching
    assert all(t[0].startswith("INSERT INTO run_log") for t in touching if t)
    assert sum(1 for t in touching if t) == 21, "every write of this run logged something"


@pytest.mark.both_stores
async def test_cancel_check_verdicts_and_every_kind_are_logged(
    checked: Engine, judge: Any, tmp_path: Path
) -> None:
    screen, view = await held(checked, judge)
    data = await log_of(checked, screen.run_id)
    kinds = [e["kind"] for e in data["entries"]]
    assert kinds[-2:] == ["check_verdict", "escalated"]
    verdict, escalated = data["entries"][-2:]
    assert verdict["detail"]["verdict"]["verdict"] == "unsure"
    [item] = view["workItems"]
    assert (escalated["by"], escalated["note"]) == (None, item["escalation"]["note"])
    ok(await call(checked, OPS, "cancel", runId=screen.run_id, reason="Vendor withdrew."), "cancel")
    last = (await log_of(checked, screen.run_id))["entries"][-1]
    assert (last["kind"], last["by"], last["note"]) == ("cancelled", "ops@example.com", "Vendor withdrew.")


async def test_the_kinds_the_two_runs_log_are_all_the_kinds() -> None:
    covered = {kind for kind, *_ in EXPECTED} | {"check_verdict", "cancelled"}
    assert covered == set(LOG_KINDS)
    assert set(result_schema()["$defs"]["entry"]["properties"]["kind"]["enum"]) == set(LOG_KINDS)


async def test_the_log_reads_the_same_after_a_restart(tmp_path: Path, clock: ManualClock) -> None:
    engine = await Engine.open(tmp_path / "data", make_org(), clock=clock)
    try:
        run_id = await drive(engine, clock, tmp_path, [])
        before = await log_of(engine, run_id)
        other = (await start(engine, "logged", {}))["run"]["id"]
        token = (await claim(engine, other, "work"))["token"]
        token = ok(await call(engine, SCREENER, "renew", token=token), "renew")["token"]
    finally:
        await engine.close()
    again = await Engine.open(tmp_path / "data", make_org(), clock=clock)
    try:
        assert await log_of(again, run_id) == before
        # Counting goes on across the restart: the next renewal is counted on the same entry.
        ok(await call(again, SCREENER, "renew", token=token), "renew")
        assert rows(await log_of(again, other))[-1] == ("renewed", "work", "a_screener", 2)
    finally:
        await again.close()


@pytest.mark.both_stores
async def test_pages_follow_the_cursor_and_a_wrong_one_is_refused(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    run_id = await drive(engine, clock, tmp_path, [])
    first = await log_of(engine, run_id, limit=10)
    assert len(first["entries"]) == 10 and first["nextCursor"] is not None
    rest = await log_of(engine, run_id, cursor=first["nextCursor"], limit=100)
    assert rows(first) + rows(rest) == EXPECTED and rest["nextCursor"] is None
    other = ok(await call(engine, SCREENER, "start_run", process="logged", inputs={}), "start_run")["run"][
        "id"
    ]
    wrong = await engine.run_log(OPS, {"runId": other, "cursor": first["nextCursor"]})
    err(wrong, "invalid", ["cursor: not valid"])
    err(await engine.run_log(OPS, {"runId": "r_missing"}), "not_found")
    err(await engine.run_log(OPS, {"runId": run_id, "limit": 0}), "invalid")
    # Anyone who may read the run with get_run reads its log: an agent, a person not involved.
    assert rows(await log_of(engine, run_id, who=SCREENER)) == EXPECTED


def test_a_run_keeps_its_head_and_a_ring_of_its_latest_entries() -> None:
    assert [slot(n) for n in (1, HEAD, HEAD + 1, HEAD + RING, HEAD + RING + 1)] == [
        1,
        HEAD,
        HEAD + 1,
        HEAD + RING,
        HEAD + 1,
    ]
    assert len({slot(n) for n in range(1, 5 * (HEAD + RING))}) == HEAD + RING


@pytest.mark.both_stores
async def test_a_long_run_keeps_the_cap_and_says_what_gave_way(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, LOGGED, {"finance-approver": "g_finance"})
    run_id = (await start(engine, "logged", {}))["run"]["id"]
    claims = HEAD + RING  # each claim and lapse adds two entries
    for _ in range(claims // 2 + 5):
        await claim(engine, run_id, "work")
        clock.advance(minutes=11)
        await engine.tick()
    entries: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await log_of(engine, run_id, **({"cursor": cursor} if cursor else {}))
        entries += page["entries"]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    total = 2 + 2 * (claims // 2 + 5)
    assert len(entries) == HEAD + RING
    seqs = [e["seq"] for e in entries]
    assert seqs[:HEAD] == list(range(1, HEAD + 1))
    assert seqs[HEAD:] == list(range(total - RING + 1, total + 1))
    assert (entries[0]["kind"], entries[-1]["kind"]) == ("run_started", "timed_out")
