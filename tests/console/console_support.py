"""Shared pieces of the console tests: an org, test processes, an agent that works steps, the app.

The console runs against a real engine in a temporary folder on a ManualClock, through LocalClient,
exactly as `apc` runs it; agents act through `engine.call` the way any agent would.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic
from typing import Any

from rich.text import Text
from textual.widgets import Input, TextArea
from textual.worker import WorkerState

from console.app import ApcApp
from console.client import Client
from console.client.local import LocalClient
from console.client.wire import (
    Escalation,
    PersonWorkEntry,
    Run,
    RunState,
    RunView,
    StepData,
    StepView,
    WorkItem,
)
from console.live.session import Session
from console.settings.config import ConsoleConfig
from console.settings.themes import load_themes
from console.widgets.live_table import LiveTable
from console.widgets.virtual_table import VirtualTable
from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator import Answer, CheckRequest
from engine.identity import Identity
from engine.ids import IdSource, new_id
from engine.org import OrgConfig
from tests.support import org
from tests.support.org import MIRA, OPS, SCREENER
from tests.support.processes import SCREENING, publish

INTAKE = """
---
name: intake
description: A person fills in a request form and chooses where it goes.
inputs:
  ticket: string
steps:
  - id: fill_form
    person: intake
    task: Fill in every field of the request and attach the signed form.
    output:
      title: string
      amount: number
      urgent: boolean
      start: date
      meeting: datetime
      tier: { type: string, one_of: [gold, silver] }
      tags: { type: list, items: string }
      details: object
      owner: person
      remark: { type: string, optional: true }
    evidence: [file]
    next:
      - { to: accepted, when: The request is complete }
      - { to: refused, when: Something is missing }
  - id: accepted
    finish: accepted
  - id: refused
    finish: refused
---

# Intake

Fill in the form.
"""

SETTLEMENT = """
---
name: settlement
description: Wait for the payment event, then finish.
inputs:
  invoice: string
steps:
  - id: paid
    wait_for: invoice-paid
    next: done
  - id: done
    finish: settled
---

# Settlement

Billing sends invoice-paid.
"""

REVIEW_PAIR = """
---
name: review-pair
description: Legal and finance review a contract at the same time.
inputs:
  contract: string
steps:
  - id: review
    parallel: [legal, finance]
    next: done
  - id: legal
    person: legal
    task: Review the legal terms.
    output: { fine: boolean }
    next: join
  - id: finance
    person: finance-approver
    task: Review the price.
    output: { fine: boolean }
    next: join
  - id: done
    finish: reviewed
---

# Review pair

Both review; the contract is reviewed when both are done.
"""

VETTING = """
---
name: vetting
description: Screen a vendor; a model checks the screening before the step completes.
inputs:
  vendorName: string
steps:
  - id: check_vendor
    agent: Check the vendor against the sanctions lists. Attach the report.
    output:
      cleared: boolean
      summary: string
    evidence: [file]
    check:
      - ask: The cleared verdict matches the report.
        pass: 0.9
        fail: 0.5
      - ask: What does the summary do?
        one_of:
          states: States the verdict and the lists checked.
          hedges: Avoids a verdict.
        pass: [states]
    next:
      - { to: done, when: Vendor is cleared }
      - { to: declined, when: Any hit }
  - id: done
    finish: onboarded
  - id: declined
    finish: declined
---

# Vetting

The agent screens the vendor; a model checks the screening.
"""
YES_NO_ASK = "The cleared verdict matches the report."
CHOICE_ASK = "What does the summary do?"


@dataclass
class Judge:
    """A fake evaluator: answers each question from `answers` by its text, as a model would."""

    answers: dict[str, Answer] = field(default_factory=dict)
    model: str = "judge-1"

    async def answer(self, request: CheckRequest) -> Answer:
        return self.answers[request.question.ask]

    async def aclose(self) -> None:
        """Nothing to release."""


PROCESSES: tuple[tuple[str, dict[str, str]], ...] = (
    (SCREENING, {"finance-approver": "finance-approver"}),
    (INTAKE, {"intake": "intake"}),
    (SETTLEMENT, {}),
    (REVIEW_PAIR, {"legal": "legal", "finance-approver": "finance-approver"}),
)


def make_org() -> OrgConfig:
    """The shared org in the console's groups: the operator is in each, so one session can act on all."""
    return org.make_org(
        groups={"finance-approver": (OPS, MIRA), "intake": (OPS,), "legal": (OPS,)},
        people=(MIRA, OPS),
        agents=(SCREENER,),
    )


async def open_engine(
    root: Path,
    clock: ManualClock,
    base_url: str = "http://127.0.0.1:8765",
    *,
    evaluator: Judge | None = None,
    ids: IdSource = new_id,
) -> Engine:
    """The test processes published; `vetting` too when there is an evaluator to answer its check."""
    engine = await Engine.open(
        root / "data", make_org(), clock=clock, public_base_url=base_url, evaluator=evaluator, ids=ids
    )
    for text, bind in PROCESSES + (((VETTING, {}),) if evaluator is not None else ()):
        await publish(engine, root, text, bind)
    return engine


def fixed_ids() -> IdSource:
    """Engine ids from a counter per prefix (`r_0001`, `w_0001`, `f_0001`), the same on every run."""
    counters: dict[str, Iterator[int]] = {}
    return lambda prefix: f"{prefix}_{next(counters.setdefault(prefix, itertools.count(1))):04d}"


def counter_ids(prefix: str = "req") -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"{prefix}-{next(numbers):04d}"


def make_client(engine: Engine, who: Identity = OPS) -> LocalClient:
    return LocalClient(engine, who, request_ids=counter_ids())


def make_app(client: LocalClient, clock: ManualClock, **options: Any) -> ApcApp:
    options.setdefault("live", False)
    options.setdefault("cursor_blink", False)
    options.setdefault("config", ConsoleConfig())
    options.setdefault("themes", load_themes())
    session = Session(client, "embedded · test", clock=clock)
    return ApcApp(session, **options)


async def run_view(client: Client, run_id: str) -> RunView:
    """The run as `get_run` shows it, asserting the server answered."""
    answer = await client.get_run(run_id)
    assert answer["ok"], answer
    return answer["data"]


async def work_entries(client: Client) -> list[PersonWorkEntry]:
    """The caller's open work items, as the work queue reads them."""
    answer = await client.get_work()
    assert answer["ok"], answer
    return [entry for entry in answer["data"]["items"] if "workItem" in entry]


class Agent:
    """An agent working steps through the tools, as a real one would over MCP."""

    def __init__(self, engine: Engine, who: Identity = SCREENER) -> None:
        self.engine = engine
        self.who = who
        self.ids = counter_ids("agent")

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        if tool not in ("get_run", "get_work", "list_runs"):
            arguments["requestId"] = self.ids()
        answer = await self.engine.call(self.who, tool, arguments)
        assert answer["ok"], answer
        return answer["data"]

    async def start(self, process: str, inputs: dict[str, Any], **extra: Any) -> str:
        return str((await self.call("start_run", process=process, inputs=inputs, **extra))["run"]["id"])

    async def upload(self, name: str, content: bytes) -> str:
        data = await self.call(
            "upload",
            fileName=name,
            contentType="text/plain",
            contentBase64=base64.b64encode(content).decode(),
        )
        return str(data["id"])

    async def screen(
        self, run_id: str, *, cleared: bool = True, report: bytes = b"no hits\n"
    ) -> dict[str, Any]:
        """Claim check_vendor and submit it with a report, routed to approve (or decline)."""
        token = (await self.call("claim", runId=run_id, stepId="check_vendor"))["token"]
        file_id = await self.upload("report.txt", report)
        return await self.call(
            "submit",
            token=token,
            output={"cleared": cleared, "summary": "Both lists checked."},
            evidence=[{"kind": "file", "ref": file_id}],
            summary="Searched OFAC and EU by legal name.",
            next="approve" if cleared else "decline",
            reason="Vendor is cleared." if cleared else "A hit.",
        )

    async def escalate(self, run_id: str, note: str) -> dict[str, Any]:
        token = (await self.call("claim", runId=run_id, stepId="check_vendor"))["token"]
        return await self.call("escalate", token=token, note=note)


def type_into(app: ApcApp, selector: str, text: str) -> None:
    """Set an input's (or a text area's) value directly: the tests are about what the console does with it."""
    widget = app.screen.query_one(selector)
    if isinstance(widget, TextArea):
        widget.load_text(text)
    else:
        assert isinstance(widget, Input)
        widget.value = text


def shown(app: ApcApp, selector: str) -> str:
    """The plain text a Static on the current screen shows."""
    from textual.widgets import Static

    return str(app.screen.query_one(selector, Static).content)


SETTLE_SECONDS = 30.0
"""How long `settle` waits for the console to go quiet: generous, a loaded CI machine is slow."""


def busy(app: ApcApp) -> bool:
    """Whether the app still has work in hand: a worker not finished, or a message not yet handled by
    the app or any widget of any screen on the stack (a key still bubbling, a dialog still composing,
    a dismissed dialog's callback)."""
    if any(worker.state in (WorkerState.PENDING, WorkerState.RUNNING) for worker in app.workers):
        return True
    nodes = [app, *(node for screen in app.screen_stack for node in screen.walk_children(with_self=True))]
    return any(node.message_queue_size for node in nodes)


async def settle(pilot: Any) -> None:
    """Let the app finish what a key or click started: handlers, dialogs, workers, and what those start.

    `pilot.pause()` only waits for the messages queued when it begins, and `wait_for_complete` only for
    the workers that exist when it is called; a key bubbles through several queues and a dialog's
    callback starts its worker a message later, so one round can return early on a busy machine. This
    repeats until two rounds in a row find nothing in hand.
    """
    app = pilot.app
    deadline = monotonic() + SETTLE_SECONDS
    quiet = 0
    while quiet < 2:
        await pilot.pause()
        await app.workers.wait_for_complete()
        quiet = 0 if busy(app) else quiet + 1
        if quiet < 2 and monotonic() > deadline:
            raise AssertionError(f"the console was still busy after {SETTLE_SECONDS:g}s")


async def press(pilot: Any, *keys: str) -> None:
    """Press each key and settle after it: `pilot.press` returns once the app has the key, which on a
    busy machine can be before the binding it triggers has run."""
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


async def click(pilot: Any, selector: str) -> None:
    """Scroll a widget of the current screen into view, then click it, as a person would."""
    pilot.app.screen.query_one(selector).scroll_visible(animate=False, immediate=True)
    await pilot.pause()
    await pilot.click(selector)
    await settle(pilot)


def a_run(run_id: str = "r_1", state: RunState = "active", outcome: str | None = None) -> Run:
    """A run record with only what a unit test varies; the rest fixed."""
    return {
        "id": run_id,
        "process": "screening",
        "version": 1,
        "mode": "live",
        "state": state,
        "outcome": outcome,
        "ended": None,
        "startedBy": OPS.id,
        "startedAt": "2026-10-06T09:00:00Z",
        "updatedAt": "2026-10-06T09:00:00Z",
    }


def a_work_item(step_id: str, escalation: Escalation | None = None) -> WorkItem:
    """An open approval on `step_id`, optionally escalated."""
    return {
        "id": f"w_{step_id}",
        "stepId": step_id,
        "kind": "approve",
        "text": "Approve it.",
        "output": None,
        "evidence": None,
        "next": None,
        "assignedTo": {"group": "finance-approver"},
        "snapshot": "s1",
        "due": None,
        "escalation": escalation,
        "handoff": None,
        "decide": {
            "tool": "decide",
            "arguments": {"runId": "r_1", "workItemId": f"w_{step_id}", "snapshot": "s1", "requestId": "x"},
            "decisions": ["approved", "rejected", "failed"],
        },
    }


def a_view(
    run: Run,
    steps: Sequence[StepView] = (),
    data: Mapping[str, StepData] | None = None,
    work_items: Sequence[WorkItem] = (),
) -> RunView:
    """A run view of `run`: its steps, their records in run data, its open work items."""
    return {
        "run": run,
        "data": {"inputs": {}, "steps": dict(data or {})},
        "steps": list(steps),
        "workItems": list(work_items),
        "body": "",
    }


def cells(table: LiveTable | VirtualTable, key: str) -> tuple[Text, ...]:
    """The cells of one row as shown, asserting the row is there."""
    found = table.row_cells(key)
    assert found is not None, f"no row {key}"
    return found
