"""Helpers for the demo tests: small processes, the demo's org (from tests/support's), a conducted demo.

Import with `from tests.demo.demo_support import ...`; the fixtures are in conftest.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from demo.system import DemoSettings, DemoSystem
from demo.world.relations import Relations
from demo.world.scene import Scene
from engine.clock import ManualClock
from engine.evaluator import CheckConfig
from engine.identity import agent
from engine.org import OrgConfig
from tests.support import org
from tests.support.calls import rid as rid
from tests.support.envelopes import RESULT_VALIDATORS
from tests.support.org import token

SAMPLES = Path(__file__).resolve().parents[2] / "sample_processes"
NOW = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)

OPERATOR = org.OPS.id
OPERATOR_TOKEN = token(org.OPS)
MIRA = org.MIRA.id
MIRA_TOKEN = token(org.MIRA)
AGENT_A = "agent-a"
AGENT_B = "agent-b"
DEMO_AGENTS = (agent(AGENT_A), agent(AGENT_B))
"""The demo's own agents: a demo agent's habits are seeded by its name."""
AGENT_TOKENS = {who.id: token(who) for who in DEMO_AGENTS}
LEASE_SECONDS = 600

SCREENING = """
---
name: screening
description: Screen a vendor against the sanctions lists and get finance approval.
inputs:
  vendorName: string
steps:
  - id: check_vendor
    agent: |
      Check the vendor against the sanctions lists. Record what you found.
      Keep the search terms for the audit.
    output:
      findings: string
    next: approve
  - id: approve
    person: finance-approver
    approve: Approve when the vendor is cleared.
    due: 1h
    on_reject: check_vendor
    next: done
  - id: done
    finish: onboarded
---

# Screening

The agent screens the vendor, finance approves.
"""

REVIEW = """
---
name: review
description: Review a request, attach the report and route it.
inputs:
  requestTitle: string
steps:
  - id: assess
    agent: Assess the request. Attach the report and link the record.
    output:
      eligible: boolean
      approvedAmount: number
      notes:
        type: string
        optional: true
    evidence: [file, link]
    next:
      - { to: accept, when: Eligible and 100 or less }
      - { to: decline, when: Not eligible under the policy }
  - id: accept
    finish: accepted
  - id: decline
    finish: declined
---

# Review

The agent assesses and routes.
"""

INTAKE = """
---
name: intake
description: The requester completes the request and attaches the quote.
inputs:
  requestTitle: string
steps:
  - id: clarify
    person: initiator
    task: Describe the request. Attach the quote.
    output:
      justification: string
      revisedAmount:
        type: number
        optional: true
    evidence: [file]
    next:
      - { to: filed, when: Request is complete }
      - { to: dropped, when: Request is withdrawn }
  - id: filed
    finish: filed
  - id: dropped
    finish: withdrawn
---

# Intake

The requester fills in the request.
"""

DELIVERY = """
---
name: delivery
description: Wait for the courier to confirm a delivery, then for the signature; chase a late one.
inputs:
  item: string
steps:
  - id: await_delivery
    wait_for: delivered
    timeout: 30m
    on_timeout: chase
    next: await_signature
  - id: chase
    agent: Chase the courier and record what they say.
    output:
      status: string
    next: late
  - id: await_signature
    wait_for: signed
    next: received
  - id: received
    finish: received
  - id: late
    finish: late
---

# Delivery

Waits on the courier.
"""

VETTING = """
---
name: vetting
description: Vet a supplier against both sanctions lists; a model checks the findings cover both.
inputs:
  vendorName: string
steps:
  - id: vet
    agent: Search both sanctions lists for the vendor. Record what you found and the lists searched.
    output:
      findings: string
      listsSearched: { type: list, items: string }
    check: The findings and listsSearched cover both the OFAC and the EU list.
    next: done
  - id: done
    finish: vetted
---

# Vetting

A model checks the agent's findings.
"""

VETTING_ANSWERS = """
[[answer]]
process = "vetting"
step = "vet"
ask = "The findings and listsSearched cover both the OFAC and the EU list."
yes = 0.2
"""
"""Appended to the sample answers: the vetting check never passes, so an agent has to give up."""

PROCESSES: tuple[tuple[str, dict[str, str]], ...] = (
    (SCREENING, {"finance-approver": "g_finance"}),
    (REVIEW, {}),
    (INTAKE, {}),
    (DELIVERY, {}),
)


def make_org() -> OrgConfig:
    """The shared org with Mira alone in finance and the demo's own agents."""
    return org.make_org(groups={"g_finance": (org.MIRA,)}, people=(org.MIRA, org.OPS), agents=DEMO_AGENTS)


def make_check_org(answers: Path) -> OrgConfig:
    """The org of `make_org` with Sue as support lead and the scripted evaluator answering from `answers`."""
    return org.make_org(
        groups={"g_finance": (org.MIRA,), "support-lead": (org.SUE,)},
        people=(org.MIRA, org.SUE, org.OPS),
        agents=DEMO_AGENTS,
        check=CheckConfig("scripted", answers=answers),
    )


def schema_problems(view: Mapping[str, Any]) -> list[str]:
    """Why `view` breaks get_run's result schema; [] when it conforms."""
    return [f"{list(e.path)}: {e.message}" for e in RESULT_VALIDATORS["get_run"].iter_errors(view)]


def scene(
    process: str = "review",
    *,
    data: dict[str, Any] | None = None,
    body: str = "",
    people: tuple[str, ...] = (),
    relations: Relations | None = None,
    seed: str = "1:r_1",
    now: datetime = NOW,
) -> Scene:
    """A scene for drafting outside a run: the relations of the samples only when given."""
    return Scene(
        process, seed, now, data or {"inputs": {}, "steps": {}}, body, people, relations or Relations()
    )


@contextlib.asynccontextmanager
async def conducted(tmp_path: Path, **settings: Any) -> AsyncIterator[DemoSystem]:
    """A demo on a ManualClock that nothing runs by itself: the test conducts it (`system.turn`).

    Used inside the test, so the agents' MCP links open and close in the test's own task.
    """
    base = DemoSettings(data_dir=tmp_path / "demo", port=0, runs=0, lease_seconds=600)
    system = await DemoSystem.open(replace(base, **settings), clock=ManualClock(NOW))
    try:
        yield system
    finally:
        await system.disconnect_agents()
        await system.close()


async def turn_until(
    system: DemoSystem, done: Callable[[], Awaitable[bool]], hours: float = 4, seconds: float = 30
) -> None:
    """Conduct the demo, `seconds` of demo time a turn, until `done` or `hours` of demo time passed."""
    began = system.clock.now()
    while not await done():
        assert (system.clock.now() - began).total_seconds() < hours * 3600, "not reached in time"
        await system.turn(seconds)


async def until(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    """Wait for a task, a worker or a message to get there (I/O and handlers, not a clock), or fail
    after `seconds`: a loaded machine gets there late, never a different way."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), seconds)
