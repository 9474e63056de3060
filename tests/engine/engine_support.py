"""Shared helpers for driving the engine through `engine.call`, the way agents and people do.

Import them with `from tests.engine.engine_support import ...` (conftest.py makes the fixtures available).
The org, the envelope checks and the calls come from tests/support; the names this folder's tests import
from here are passed on (`name as name` marks a re-export):

- `ok(envelope, tool)` asserts success and validates `data` against the tool's result schema;
  `err(envelope, code, issues)` asserts the error and validates it against tool-error.json.
- `engine` is an Engine on a temporary folder with the shared org, on the `clock` of tests/conftest.py.
- `publish(engine, tmp_path, text, bind)` writes a PROCESS.md into a folder named after it and publishes.
- `decide(engine, who, run_id, item, decision, **extra)` decides an open work item.
- `claim_as_before(engine, run_id, step_id)` claims with a lease token of the format from before signed
  tokens, indexed in the `tokens` table; `indexed_tokens(engine)` counts that table's rows.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity, person
from engine.org import token_digest
from engine.store.base import Transaction
from engine.store.postgres import PostgresTransaction
from engine.store.sqlite import SqliteTransaction
from engine.tools.leases import Leases
from tests.support.calls import call, decide
from tests.support.calls import rid as rid
from tests.support.envelopes import err as err
from tests.support.envelopes import ok
from tests.support.org import LENA, OPS, SCREENER, make_org
from tests.support.org import MIRA as MIRA
from tests.support.org import OMAR as OMAR
from tests.support.org import OTHER_AGENT as OTHER_AGENT
from tests.support.processes import SCREENING as SCREENING
from tests.support.processes import publish as publish
from tests.support.schemas import SPEC, validator

FIXTURES = SPEC / "conformance" / "fixtures"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_processes"

WORK_ITEM_VALIDATOR = validator("work-item.json")


@pytest.fixture
async def engine(
    tmp_path: Path, clock: ManualClock, store_kind: str, request: pytest.FixtureRequest
) -> AsyncIterator[Engine]:
    """On SQLite in the data folder, or (`store_kind`, see tests/conftest.py) on PostgreSQL."""
    database = request.getfixturevalue("pg_database") if store_kind == "postgresql" else None
    eng = await Engine.open(tmp_path / "data", make_org(), clock=clock, database=database)
    try:
        yield eng
    finally:
        await eng.close()


THREE_AGENTS = """
---
name: three-agents
description: Three agent steps in a row.
inputs:
  ticket: string
steps:
  - id: one
    agent: Do the first thing.
    output: { note: string }
  - id: two
    agent: Do the second thing.
    output: { note: string }
  - id: three
    agent: Do the third thing.
    output: { note: string }
  - id: done
    finish: finished
---

Three steps.
"""


async def start(
    engine: Engine, process: str, inputs: dict[str, Any], who: Identity = SCREENER, **extra: Any
) -> Any:
    return ok(await call(engine, who, "start_run", process=process, inputs=inputs, **extra), "start_run")


async def claim(engine: Engine, run_id: str, step_id: str, who: Identity = SCREENER) -> Any:
    return ok(await call(engine, who, "claim", runId=run_id, stepId=step_id), "claim")


class _Issuing(Leases):
    """Issues one given token, as a server from before signed lease tokens would have."""

    def __init__(self, token: str) -> None:
        self.token = token

    def issue(self, run_id: str, step_id: str) -> str:
        return self.token


async def claim_as_before(engine: Engine, run_id: str, step_id: str, who: Identity = SCREENER) -> str:
    """Claim `step_id` as a server from before signed lease tokens did: the token random base64url text,
    indexed to its run and step in the `tokens` table; the token."""
    token = secrets.token_urlsafe(32)
    signing, engine.ctx.leases = engine.ctx.leases, _Issuing(token)
    try:
        await claim(engine, run_id, step_id, who)
    finally:
        engine.ctx.leases = signing
    row = (token_digest(token), run_id, step_id)

    async def index(tx: Transaction) -> None:
        if isinstance(tx, SqliteTransaction):
            tx.connection.execute("INSERT INTO tokens (token_hash, run_id, step_id) VALUES (?, ?, ?)", row)
        else:
            assert isinstance(tx, PostgresTransaction)
            await tx._c.execute("INSERT INTO tokens (token_hash, run_id, step_id) VALUES (%s, %s, %s)", row)

    await engine.store.write(index)
    return token


async def indexed_tokens(engine: Engine) -> int:
    """Rows in the `tokens` table (on either store)."""

    async def count(tx: Transaction) -> int:
        if isinstance(tx, SqliteTransaction):
            return int(tx.connection.execute("SELECT COUNT(*) FROM tokens").fetchone()[0])
        assert isinstance(tx, PostgresTransaction)
        row = await (await tx._c.execute("SELECT COUNT(*) FROM tokens")).fetchone()
        assert row is not None
        return int(row[0])

    return await engine.store.write(count)


def step_states(view: dict[str, Any]) -> dict[str, Any]:
    return {s["id"]: s["state"] for s in view["steps"]}


def sample_value(declared: Any) -> Any:
    """A value of a declared field type (the first `one_of` choice when there is one)."""
    spec = {"type": declared} if isinstance(declared, str) else declared
    if spec.get("one_of"):
        return spec["one_of"][0]
    kind = spec["type"]
    if kind == "list":
        return [sample_value(spec["items"])] if "items" in spec else []
    return {
        "string": "text",
        "number": 1,
        "boolean": True,
        "date": "2026-10-07",
        "datetime": "2026-10-07T09:00:00Z",
        "object": {},
        "person": LENA.id,
    }[kind]


def sample_output(requirements: dict[str, Any] | None) -> dict[str, Any]:
    return {name: sample_value(declared) for name, declared in (requirements or {}).items()}


async def sample_evidence(engine: Engine, kinds: list[str] | None) -> list[dict[str, str]]:
    items = []
    for kind in kinds or []:
        if kind == "file":
            reply = await call(
                engine,
                SCREENER,
                "upload",
                fileName="e.txt",
                contentType="text/plain",
                contentBase64="ZXZpZGVuY2U=",
            )
            items.append({"kind": "file", "ref": ok(reply, "upload")["id"]})
        else:
            items.append({"kind": "link", "ref": "https://example.com/evidence"})
    return items


class Driver:
    """Works a run to its end the way agents and people would, following a plan.

    `plan[step_id]` is a list of choices used in order each time the step comes up: a route target for
    a step with a `next` list, `approved`/`rejected`/`failed` for an approval or task, `event` or
    `timeout` for a `wait_for`. Without a plan entry: the first route, `approved`, `completed`, `event`.
    """

    def __init__(
        self,
        engine: Engine,
        clock: ManualClock,
        plan: dict[str, list[str]] | None = None,
        events: dict[str, str] | None = None,
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.plan = {k: list(v) for k, v in (plan or {}).items()}
        self.events = events or {}
        """wait_for step id -> the event name it waits for."""
        self.trace: list[tuple[str, str]] = []

    def choice(self, step_id: str, default: str) -> str:
        queue = self.plan.get(step_id)
        return queue.pop(0) if queue else default

    def member(self, assigned: dict[str, str]) -> Identity:
        if "person" in assigned:
            return person(assigned["person"])
        if assigned["group"] == "operators":
            return OPS
        return person(self.engine.org.groups[assigned["group"]][0])

    async def drive(self, run_id: str, limit: int = 60) -> dict[str, Any]:
        for _ in range(limit):
            view = ok(await call(self.engine, OPS, "get_run", runId=run_id), "get_run")
            if view["run"]["state"] in ("ended", "cancelled"):
                return view
            if not await self.step(view):
                await self.wait(view)
        raise AssertionError(f"run {run_id} did not end: {view['steps']}")

    async def step(self, view: dict[str, Any]) -> bool:
        run_id = view["run"]["id"]
        for s in view["steps"]:
            if s["kind"] == "agent" and s["state"] == "ready":
                data = ok(await call(self.engine, SCREENER, "claim", runId=run_id, stepId=s["id"]), "claim")
                req = data["step"]
                extra: dict[str, Any] = {}
                if req["next"]:
                    extra = {"next": self.choice(s["id"], req["next"][0]["to"]), "reason": "As planned."}
                reply = await call(
                    self.engine,
                    SCREENER,
                    "submit",
                    token=data["token"],
                    output=sample_output(req["output"]),
                    evidence=await sample_evidence(self.engine, req["evidence"]),
                    summary=f"Did {s['id']}.",
                    **extra,
                )
                ok(reply, "submit")
                self.trace.append((s["id"], extra.get("next", "done")))
                return True
        for item in view["workItems"]:
            who = self.member(item["assignedTo"])
            default = "approved" if item["kind"] == "approve" else "completed"
            decision = self.choice(item["stepId"], default)
            details: dict[str, Any] = {}
            if decision in ("rejected", "failed", "returned"):
                details["note"] = f"{decision} by plan"
            elif decision != "approved":
                details["output"] = sample_output(item["output"])
                details["evidence"] = await sample_evidence(self.engine, item["evidence"])
                if item["next"]:
                    routes = [r["to"] for r in item["next"]]
                    details.update(next=decision if decision in routes else routes[0], reason="As planned.")
            verdict = decision if decision in ("approved", "rejected", "failed", "returned") else "completed"
            ok(await decide(self.engine, who, run_id, item, verdict, **details), "decide")
            self.trace.append((item["stepId"], decision))
            return True
        return False

    async def wait(self, view: dict[str, Any]) -> None:
        """Nothing to do by hand: deliver a planned event, or let a day pass and apply timers."""
        run_id = view["run"]["id"]
        for s in view["steps"]:
            planned = self.plan.get(s["id"]) or ["event"]
            if s["kind"] == "wait_for" and s["state"] == "waiting" and planned[0] == "event":
                self.choice(s["id"], "event")
                name = self.events[s["id"]]
                reply = await call(
                    self.engine, SCREENER, "send_event", runId=run_id, name=name, data={"ref": "E1"}
                )
                assert ok(reply, "send_event") == {"consumedBy": s["id"]}
                self.trace.append((s["id"], "event"))
                return
        self.clock.advance(days=1)
        await self.engine.tick()
