"""A second implementer's harness for auditing the engine against core-2 (spec + tools.md + profiles).

Everything goes through `engine.call(identity, tool, arguments)`, as it would over MCP. `Server.call`
checks every envelope on the way back, so no test can forget to:

- validate `data` against `tools/<tool>.result.json` and `error` against `tool-error.json`
  (Draft 2020-12, with a `referencing.Registry` of every schema file by its `$id`);
- expect `invalid` whenever the arguments break `tools/<tool>.arguments.json` (spec §6 rule 3: schema
  violations are `invalid` before any rule);
- make sure no token handed out so far appears in a run view, `get_work` or `list_runs` (spec §6 rule 2).

Time only moves through `Server.advance`, which moves the ManualClock and applies due timers the way
the server's timer loop would.

Its org, identities, `rid` and envelope checks are its own on purpose, not those of tests/support: an
audit that shared the implementation tests' helpers would share their blind spots. Only the schemas (and
the published output schemas) are loaded from tests/support, as the spec gives them.
"""

from __future__ import annotations

import base64
import json
import textwrap
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity, agent, person
from engine.org import OrgConfig, ServerSettings
from tests.support.envelopes import OUTPUT_VALIDATORS, output_problems
from tests.support.schemas import SCHEMAS, validator

WRITES = ("start_run", "claim", "renew", "upload", "submit", "escalate", "decide", "cancel", "send_event")
VIEW_TOOLS = ("start_run", "get_run", "submit", "decide", "escalate", "cancel")
"""Tools whose result is the run view."""
TOKEN_FREE = (*VIEW_TOOLS, "get_work", "list_runs", "list_processes", "describe")

AGENT = agent("a_screener")
AGENT2 = agent("a_backup")
FIN1 = person("fin.one@example.com")
FIN2 = person("fin.two@example.com")
LEGAL = person("legal@example.com")
OUTSIDER = person("outsider@example.com")
OPS = person("ops@example.com", operator=True)


def _tool_validators() -> tuple[dict[str, Draft202012Validator], dict[str, Draft202012Validator]]:
    index = json.loads((SCHEMAS / "index.json").read_text())
    results, arguments = {}, {}
    for tool, files in index["tools"].items():
        results[tool] = validator(files["result"])
        arguments[tool] = validator(files["arguments"])
    return results, arguments


RESULT_VALIDATORS, ARGUMENT_VALIDATORS = _tool_validators()
ERROR_VALIDATOR = validator("tool-error.json")


def schema_problems(validator: Draft202012Validator, value: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    ]


def arguments_valid(tool: str, arguments: dict[str, Any]) -> bool:
    return ARGUMENT_VALIDATORS[tool].is_valid(arguments)


def rid() -> str:
    return str(uuid.uuid4())


def wire(value: Any) -> str:
    """The bytes a result would travel as (key order kept): what "byte-for-byte" compares."""
    return json.dumps(value, ensure_ascii=False)


def make_org(settings: ServerSettings | None = None) -> OrgConfig:
    return OrgConfig.build(
        groups={"g_finance": [FIN1.id, FIN2.id], "g_legal": [LEGAL.id]},
        people={
            FIN1.id: "tok-fin-one-1",
            FIN2.id: "tok-fin-two-2",
            LEGAL.id: "tok-legal-003",
            OUTSIDER.id: "tok-outsider4",
        },
        operators={OPS.id: "tok-operator5"},
        agents={AGENT.id: "tok-agent-006", AGENT2.id: "tok-agent-007"},
        server=settings,
    )


@dataclass
class Server:
    engine: Engine
    clock: ManualClock
    root: Path
    tokens: set[str] = field(default_factory=set)

    async def call(self, who: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One raw tool call; the envelope is checked against the contract before it is returned."""
        envelope = await self.engine.call(who, tool, arguments)
        if envelope.get("ok") is True:
            assert set(envelope) == {"ok", "data"}, envelope
            problems = schema_problems(RESULT_VALIDATORS[tool], envelope["data"])
            assert not problems, f"{tool} result breaks its schema: {problems}"
        else:
            assert set(envelope) == {"ok", "error"} and envelope["ok"] is False, envelope
            problems = schema_problems(ERROR_VALIDATOR, envelope["error"])
            assert not problems, f"{tool} error breaks tool-error.json: {problems}"
            assert envelope["error"]["message"].strip(), envelope
        if tool in OUTPUT_VALIDATORS:
            problems = output_problems(tool, envelope)
            assert not problems, f"{tool} envelope breaks the output schema it publishes: {problems}"
        if tool in ARGUMENT_VALIDATORS and not arguments_valid(tool, arguments):
            assert not envelope["ok"] and envelope["error"]["code"] == "invalid", (
                f"{tool} accepted arguments its schema refuses: {arguments} -> {envelope}"
            )
        if envelope["ok"] and tool in ("claim", "renew"):
            self.tokens.add(envelope["data"]["token"])
        if envelope["ok"] and tool in TOKEN_FREE:
            text = wire(envelope["data"])
            leaked = [t for t in self.tokens if t in text]
            assert not leaked, f"{tool} result carries a token"
        return envelope

    async def send(self, who: Identity, tool: str, **arguments: Any) -> dict[str, Any]:
        """A call with a fresh requestId for writes that do not name one."""
        if tool in WRITES:
            arguments.setdefault("requestId", rid())
        return await self.call(who, tool, arguments)

    async def ok(self, who: Identity, tool: str, **arguments: Any) -> Any:
        envelope = await self.send(who, tool, **arguments)
        assert envelope["ok"] is True, envelope
        return envelope["data"]

    async def refused(
        self, who: Identity, tool: str, code: str, issues: list[str] | None = None, **arguments: Any
    ) -> dict[str, Any]:
        """The call fails with `code` (and exactly `issues` when given, compared in any order)."""
        envelope = await self.send(who, tool, **arguments)
        assert envelope["ok"] is False, f"{tool} succeeded, expected {code}: {envelope}"
        error = envelope["error"]
        assert error["code"] == code, error
        if issues is not None:
            assert "issues" in error, error
            assert sorted(error["issues"]) == sorted(issues), error["issues"]
            assert len(set(error["issues"])) == len(error["issues"]), error["issues"]
        return error

    async def publish(self, text: str, bind: dict[str, str] | None = None) -> str:
        text = textwrap.dedent(text).lstrip("\n")
        name = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:"))
        folder = self.root / "processes" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "PROCESS.md").write_text(text)
        result = await self.engine.publish(folder, bind or {})
        assert result.ok, result.issues
        return name

    async def advance(self, **delta: float) -> None:
        self.clock.advance(**delta)
        await self.engine.tick()

    async def view(self, run_id: str, who: Identity = OPS) -> dict[str, Any]:
        return await self.ok(who, "get_run", runId=run_id)

    async def start(self, process: str, inputs: dict[str, Any], who: Identity = AGENT, **extra: Any) -> Any:
        return await self.ok(who, "start_run", process=process, inputs=inputs, **extra)

    async def claim(self, run_id: str, step_id: str, who: Identity = AGENT) -> Any:
        return await self.ok(who, "claim", runId=run_id, stepId=step_id)

    async def upload(self, content: bytes = b"screening report", who: Identity = AGENT) -> dict[str, Any]:
        return await self.ok(
            who,
            "upload",
            fileName="report.txt",
            contentType="text/plain",
            contentBase64=base64.b64encode(content).decode(),
        )

    async def decide(
        self, who: Identity, view: dict[str, Any], step_id: str, decision: str, **extra: Any
    ) -> Any:
        item = work_item(view, step_id)
        return await self.ok(
            who,
            "decide",
            runId=view["run"]["id"],
            workItemId=item["id"],
            snapshot=item["snapshot"],
            decision=decision,
            **extra,
        )


@asynccontextmanager
async def open_server(
    root: Path, settings: ServerSettings | None = None, *, database: str | None = None
) -> AsyncIterator[Server]:
    clock = ManualClock()
    engine = await Engine.open(root / "data", make_org(settings), clock=clock, database=database)
    try:
        yield Server(engine, clock, root)
    finally:
        await engine.close()


def states(view: dict[str, Any]) -> dict[str, str | None]:
    return {s["id"]: s["state"] for s in view["steps"]}


def work_item(view: dict[str, Any], step_id: str) -> dict[str, Any]:
    found = [w for w in view["workItems"] if w["stepId"] == step_id]
    assert len(found) == 1, view["workItems"]
    return found[0]


VENDOR = """
---
name: vendor-screening
description: Screen a new vendor against sanctions lists and get finance approval.
inputs:
  vendorName: string
  amount: { type: number, description: Expected annual spend, optional: true }
steps:
  - id: check_vendor
    agent: |
      Check the vendor against the sanctions lists.
      Attach the screening report.
    output:
      cleared: boolean
      summary: string
    evidence: [file]
    due: 1d
    next:
      - { to: approve, when: Vendor is cleared on both lists }
      - { to: decline, when: Any sanctions hit }
  - id: approve
    person: finance-approver
    approve: Approve only when the vendor is cleared.
    due: 2d
    on_reject: check_vendor
    next: done
  - id: decline
    finish: declined
  - id: done
    finish: onboarded
---

# Vendor screening

The agent screens, finance approves.
"""
VENDOR_BIND = {"finance-approver": "g_finance"}

MEMO = """
---
name: memo-writing
description: Legal writes a memo on a topic.
inputs:
  topic: string
steps:
  - id: write
    person: legal-team
    task: Write the memo.
    output: { memo: string }
    due: 1d
  - id: done
    finish: written
---

One task.
"""
MEMO_BIND = {"legal-team": "g_legal"}

SETTLEMENT = """
---
name: settlement
description: Request a settlement and wait for two payments, chasing when the first is late.
inputs:
  ref: string
steps:
  - id: request
    agent: Request the settlement.
    output: { sent: boolean }
  - id: first_payment
    wait_for: payment
    timeout: 2d
    on_timeout: chase
  - id: second_payment
    wait_for: payment
    next: settled
  - id: chase
    agent: Chase the payer.
    output: { chased: boolean }
    next: settled
  - id: settled
    finish: settled
---

Request, wait, settle.
"""

TIMED = """
---
name: timed-release
description: Pause, then hold until the release time, then release.
inputs:
  releaseAt: { type: datetime, optional: true }
steps:
  - id: pause
    wait: 1h
  - id: hold
    wait_until: inputs.releaseAt
  - id: done
    finish: released
---

Wait twice.
"""


async def vendor_submission(server: Server, token: str, route: str = "approve", who: Identity = AGENT) -> Any:
    """Arguments of an acceptable `check_vendor` submission, with a fresh uploaded report."""
    report = await server.upload(who=who)
    return {
        "token": token,
        "output": {"cleared": route == "approve", "summary": "No hits on either list."},
        "evidence": [{"kind": "file", "ref": report["id"]}],
        "summary": "Searched both lists by legal name. Report attached.",
        "next": route,
        "reason": "Cleared on both lists." if route == "approve" else "A hit.",
    }
