"""Shared helpers for driving the engine through `engine.call`, the way agents and people do.

Import them with `from engine_support import ...` (conftest.py makes the fixtures available).

- `ok(envelope, tool)` asserts success and validates `data` against the tool's result schema;
  `err(envelope, code, issues)` asserts the error and validates it against tool-error.json.
- `engine` is an Engine on a temporary folder with a ManualClock (`clock`) and the org below.
- `publish(engine, tmp_path, text, bind)` writes a PROCESS.md into a folder named after it and publishes.
"""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity, agent, person
from engine.org import OrgConfig
from tests.support.envelopes import output_problems
from tests.support.schemas import SCHEMA_FILES, SPEC, validator

FIXTURES = SPEC / "conformance" / "fixtures"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_processes"

SCREENER = agent("a_screener")
OTHER_AGENT = agent("a_other")
MIRA = person("mira@example.com")
OMAR = person("omar@example.com")
LENA = person("lena@example.com")
OPS = person("ops@example.com", operator=True)


RESULT_VALIDATORS = {
    name.split("/")[1].removesuffix(".result.json"): validator(name)
    for name in SCHEMA_FILES
    if name.endswith(".result.json")
}
ERROR_VALIDATOR = validator("tool-error.json")
WORK_ITEM_VALIDATOR = validator("work-item.json")


def ok(envelope: dict[str, Any], tool: str) -> Any:
    assert set(envelope) == {"ok", "data"}, envelope
    assert envelope["ok"] is True, envelope
    errors = sorted(RESULT_VALIDATORS[tool].iter_errors(envelope["data"]), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert output_problems(tool, envelope) == [], f"{tool}: the published output schema refuses its result"
    return envelope["data"]


def err(envelope: dict[str, Any], code: str, issues: list[str] | None = None) -> dict[str, Any]:
    assert set(envelope) == {"ok", "error"}, envelope
    assert envelope["ok"] is False
    error = envelope["error"]
    errors = list(ERROR_VALIDATOR.iter_errors(error))
    assert not errors, [e.message for e in errors]
    assert output_problems("describe", envelope) == [], "the published output schema refuses an error"
    assert error["code"] == code, error
    if issues is not None:
        assert error.get("issues") == issues, error
    return error


def rid() -> str:
    return str(uuid.uuid4())


def make_org() -> OrgConfig:
    return OrgConfig.build(
        groups={"g_finance": [MIRA.id, OMAR.id], "g_legal": [LENA.id]},
        people={MIRA.id: "tok-mira-0001", OMAR.id: "tok-omar-0001", LENA.id: "tok-lena-0001"},
        operators={OPS.id: "tok-ops-00001"},
        agents={SCREENER.id: "tok-screener1", OTHER_AGENT.id: "tok-other-001"},
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


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


async def publish(engine: Engine, root: Path, text: str, bind: dict[str, str] | None = None) -> str:
    """Publish a PROCESS.md given as text; returns the process name."""
    text = textwrap.dedent(text).lstrip("\n")
    name = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:"))
    folder = root / "processes" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PROCESS.md").write_text(text)
    result = await engine.publish(folder, bind or {})
    assert result.ok, result.issues
    return name


async def call(engine: Engine, who: Identity, tool: str, **arguments: Any) -> dict[str, Any]:
    """A write gets a fresh requestId unless one is given."""
    if tool not in ("describe", "list_processes", "get_run", "get_work", "list_runs"):
        arguments.setdefault("requestId", rid())
    return await engine.call(who, tool, arguments)


SCREENING = """
---
name: screening
description: Screen a vendor and get finance approval.
inputs:
  vendorName: string
  amount: { type: number, optional: true }
steps:
  - id: check_vendor
    agent: Check the vendor against the sanctions lists.
    output:
      cleared: boolean
      summary: string
    evidence: [file]
    next:
      - { to: approve, when: Vendor is cleared }
      - { to: decline, when: Any hit }
  - id: approve
    person: finance-approver
    approve: Approve when cleared.
    due: 2d
    on_reject: check_vendor
    next: done
  - id: decline
    finish: declined
  - id: done
    finish: onboarded
---

# Screening

Screen, then approve.
"""

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
            args: dict[str, Any] = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"]}
            if decision in ("approved", "rejected", "failed", "returned"):
                args["decision"] = decision
                if decision != "approved":
                    args["note"] = f"{decision} by plan"
            else:
                args["decision"] = "completed"
                args["output"] = sample_output(item["output"])
                args["evidence"] = await sample_evidence(self.engine, item["evidence"])
                if item["next"]:
                    routes = [r["to"] for r in item["next"]]
                    args.update(next=decision if decision in routes else routes[0], reason="As planned.")
            ok(await call(self.engine, who, "decide", **args), "decide")
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
