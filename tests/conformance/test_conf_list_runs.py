"""list_runs filters (spec §4.2: "Filter by process, state, and any input field"; tools.md `list_runs`:
`inputs` matches on equality of the given fields).

Equality is JSON equality: `48000` equals `48000.0`, but a number never equals a string or a boolean,
`true` never equals `1`, lists compare in order, objects by their members, and a run that lacks the
field does not match.
"""

from __future__ import annotations

from typing import Any

from tests.conformance.conformance_support import (
    AGENT,
    FIN1,
    OPS,
    OUTSIDER,
    SIGN,
    VENDOR,
    VENDOR_BIND,
    Server,
)

FLEX = """
---
name: flex-inputs
description: Inputs of several types for filtering.
inputs:
  amount: { type: number, optional: true }
  urgent: { type: boolean, optional: true }
  code: { type: string, optional: true }
  tags: { type: list, optional: true }
  meta: { type: object, optional: true }
steps:
  - id: work
    agent: Work.
  - id: done
    finish: done
---

Filtering.
"""


async def _ids(server: Server, **arguments: Any) -> set[str]:
    data = await server.ok(OPS, "list_runs", limit=100, **arguments)
    assert data["nextCursor"] is None
    return {item["id"] for item in data["items"]}


async def test_items_carry_the_run_summary(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme", "amount": 48000})
    server.clock.advance(minutes=1)
    for who in (AGENT, OUTSIDER):
        data = await server.ok(who, "list_runs")
        assert data == {
            "items": [
                {
                    "id": view["run"]["id"],
                    "process": "vendor-screening",
                    "version": 1,
                    "state": "active",
                    "outcome": None,
                    "startedAt": "2026-10-06T09:00:00Z",
                    "updatedAt": "2026-10-06T09:00:00Z",
                    "inputs": {"vendorName": "Acme", "amount": 48000},
                }
            ],
            "nextCursor": None,
        }


async def test_filter_by_process_and_state(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    await server.publish(SIGN, VENDOR_BIND)
    active = (await server.start("vendor-screening", {"vendorName": "A"}))["run"]["id"]
    cancelled = (await server.start("vendor-screening", {"vendorName": "B"}))["run"]["id"]
    await server.ok(OPS, "cancel", runId=cancelled, reason="No.")
    signing = (await server.start("quick-sign", {"amount": 1}))["run"]["id"]
    claimed = await server.claim(signing, "prepare")
    await server.ok(AGENT, "submit", token=claimed["token"], output={"amount": 1}, summary="Ready.")
    signed = (await server.start("quick-sign", {"amount": 2}))["run"]["id"]
    claimed = await server.claim(signed, "prepare")
    view = await server.ok(AGENT, "submit", token=claimed["token"], output={"amount": 2}, summary="Ready.")
    await server.decide(FIN1, view, "sign", "approved")
    assert await _ids(server, process="vendor-screening") == {active, cancelled}
    assert await _ids(server, process="quick-sign") == {signing, signed}
    assert await _ids(server, state="active") == {active}
    assert await _ids(server, state="waiting") == {signing}
    assert await _ids(server, state="ended") == {signed}
    assert await _ids(server, state="cancelled") == {cancelled}
    assert await _ids(server, process="quick-sign", state="active") == set()
    ended = (await server.ok(OPS, "list_runs", state="ended"))["items"][0]
    assert (ended["state"], ended["outcome"]) == ("ended", "signed")


EQUALITY_CASES: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
    ({"amount": 48000}, {"amount": 48000}, True),
    ({"amount": 48000}, {"amount": 48000.0}, True),
    ({"amount": 48000.5}, {"amount": 48000.5}, True),
    ({"amount": 48000}, {"amount": "48000"}, False),
    ({"amount": 1}, {"amount": True}, False),
    ({"urgent": True}, {"urgent": 1}, False),
    ({"urgent": True}, {"urgent": "true"}, False),
    ({"urgent": False}, {"urgent": False}, True),
    ({"urgent": False}, {"urgent": 0}, False),
    ({"code": "007"}, {"code": "007"}, True),
    ({"code": "007"}, {"code": 7}, False),
    ({"code": "Acme"}, {"code": "acme"}, False),
    ({"tags": ["a", "b"]}, {"tags": ["a", "b"]}, True),
    ({"tags": ["a", "b"]}, {"tags": ["b", "a"]}, False),
    ({"meta": {"x": 1, "y": [True]}}, {"meta": {"y": [True], "x": 1.0}}, True),
    ({"meta": {"x": 1}}, {"meta": {"x": 1, "y": 2}}, False),
    ({}, {"amount": 48000}, False),
    ({"amount": 5, "urgent": True}, {"amount": 5, "urgent": True}, True),
    ({"amount": 5, "urgent": True}, {"amount": 5, "urgent": False}, False),
    ({"amount": 5}, {"amount": 5, "code": "x"}, False),
]


async def test_filter_by_input_equality(server: Server) -> None:
    """Each case gets its own copy of the process so the `process` filter isolates it."""
    wrong = []
    for n, (stored, query, matches) in enumerate(EQUALITY_CASES):
        name = await server.publish(FLEX.replace("name: flex-inputs", f"name: flex-{n}"), {})
        target = (await server.start(name, stored))["run"]["id"]
        other = (await server.start(name, {"code": "other"}))["run"]["id"]
        found = await _ids(server, process=name, inputs=query)
        if found != ({target} if matches else set()):
            wrong.append(f"stored {stored}, filter {query}: expected match={matches}")
        assert await _ids(server, process=name, inputs={}) == {target, other}
    assert not wrong, "\n".join(wrong)
