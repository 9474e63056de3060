"""Which steps a rejection rewinds (spec §3.1): only those completed after the returned-to step was last
reached. A forward `on_reject`, or one to a step on a route the run never took, rewinds nothing but
what the rejection itself requires, so a step that quotes earlier output still finds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import MIRA, SCREENER, call, claim, decide, ok, publish, start, step_states

pytestmark = pytest.mark.both_stores

FORWARD = """
---
name: forward-reject
description: Draft, approve; a rejection goes forward to a notice that quotes the draft.
steps:
  - id: a
    agent: Draft the offer.
    output: { x: string }
  - id: b
    person: finance
    approve: Approve the offer.
    on_reject: notify
    next: done
  - id: done
    finish: approved
  - id: notify
    agent: Tell the requester the offer steps.a.output.x was declined.
    next: closed
  - id: closed
    finish: declined
---
"""

UNTAKEN_ROUTE = """
---
name: untaken-route
description: Triage picks a route; a rejection goes to the route not taken.
steps:
  - id: a
    agent: Triage the request.
    output: { x: string }
    next:
      - { to: b, when: The request is complete }
      - { to: fix, when: Something is missing }
  - id: b
    person: finance
    approve: Approve the request.
    on_reject: fix
    next: done
  - id: done
    finish: approved
  - id: fix
    agent: Fix the request.
    next: closed
  - id: closed
    finish: fixed
---
"""

BACKWARD = """
---
name: backward-reject
description: Intake, draft, approve; a rejection returns to the draft.
steps:
  - id: intake
    agent: Read the request.
    output: { x: string }
  - id: draft
    agent: Draft.
    output: { x: string }
  - id: review
    person: finance
    approve: Approve the draft.
    on_reject: draft
  - id: done
    finish: approved
---
"""


async def _submit(engine: Engine, run_id: str, step: str, x: str, **extra: Any) -> dict[str, Any]:
    token = (await claim(engine, run_id, step))["token"]
    reply = await call(engine, SCREENER, "submit", token=token, output={"x": x}, summary="s", **extra)
    return ok(reply, "submit")


async def _reject(engine: Engine, view: dict[str, Any]) -> dict[str, Any]:
    [item] = view["workItems"]
    return ok(
        await decide(engine, MIRA, view["run"]["id"], item, "rejected", note="Not this time."), "decide"
    )


def _current(view: dict[str, Any], step: str) -> dict[str, Any]:
    return {k: v for k, v in view["data"]["steps"][step].items() if k not in ("at", "by")}


async def test_a_forward_on_reject_keeps_earlier_output(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, FORWARD, {"finance": "g_finance"})
    run_id = (await start(engine, "forward-reject", {}))["run"]["id"]
    view = await _submit(engine, run_id, "a", "offer-1")
    clock.advance(60)
    view = await _reject(engine, view)
    assert step_states(view) == {"a": "done", "b": "done", "done": None, "notify": "ready", "closed": None}
    assert _current(view, "a") == {"output": {"x": "offer-1"}, "summary": "s", "history": []}
    assert _current(view, "b") == {"decision": "rejected", "note": "Not this time.", "history": []}
    claimed = await claim(engine, run_id, "notify")
    assert claimed["data"]["steps"]["a"]["output"] == {"x": "offer-1"}


async def test_an_on_reject_to_a_route_never_taken_keeps_the_route_choice(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, UNTAKEN_ROUTE, {"finance": "g_finance"})
    run_id = (await start(engine, "untaken-route", {}))["run"]["id"]
    view = await _submit(engine, run_id, "a", "complete", next="b", reason="All there.")
    clock.advance(60)
    view = await _reject(engine, view)
    assert step_states(view) == {"a": "done", "b": "done", "done": None, "fix": "ready", "closed": None}
    assert _current(view, "a") == {
        "output": {"x": "complete"},
        "summary": "s",
        "next": "b",
        "reason": "All there.",
        "history": [],
    }


async def test_a_step_completed_before_the_returned_to_step_is_not_rewound(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, BACKWARD, {"finance": "g_finance"})
    run_id = (await start(engine, "backward-reject", {}))["run"]["id"]
    await _submit(engine, run_id, "intake", "request")
    view = await _submit(engine, run_id, "draft", "draft-1")
    clock.advance(60)
    view = await _reject(engine, view)
    assert step_states(view) == {"intake": "done", "draft": "ready", "review": None, "done": None}
    assert _current(view, "intake") == {"output": {"x": "request"}, "summary": "s", "history": []}
    assert _current(view, "draft") == {"output": {"x": "draft-1"}, "summary": "s", "history": []}
