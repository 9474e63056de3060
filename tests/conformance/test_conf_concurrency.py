"""Concurrent writes to one run are resolved by the server (spec §6 housekeeping rule, §3.4 "the first
decision wins"): calls sent at the same moment get the answers they would get one after the other.
"""

from __future__ import annotations

import asyncio

from tests.conformance.conformance_support import (
    AGENT,
    AGENT2,
    CHAIN,
    FIN1,
    FIN2,
    VENDOR_BIND,
    Server,
    rid,
    wire,
    work_item,
)


async def _chain(server: Server) -> str:
    await server.publish(CHAIN, VENDOR_BIND)
    return (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]


async def test_two_agents_claiming_at_once_one_wins(server: Server) -> None:
    run_id = await _chain(server)
    first, second = await asyncio.gather(
        server.send(AGENT, "claim", runId=run_id, stepId="draft"),
        server.send(AGENT2, "claim", runId=run_id, stepId="draft"),
    )
    outcomes = sorted([first["ok"], second["ok"]])
    assert outcomes == [False, True]
    loser = first if not first["ok"] else second
    assert (loser["error"]["code"], loser["error"]["issues"]) == ("conflict", ["claimed_by_other"])


async def test_two_group_members_deciding_at_once_the_first_wins(server: Server) -> None:
    run_id = await _chain(server)
    for step_id in ("draft", "polish"):
        claimed = await server.claim(run_id, step_id)
        view = await server.ok(AGENT, "submit", token=claimed["token"], output={"text": "t"}, summary="Done.")
    item = work_item(view, "approve")
    common = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"], "decision": "rejected"}
    first, second = await asyncio.gather(
        server.send(FIN1, "decide", note="Redo A.", **common),
        server.send(FIN2, "decide", note="Redo B.", **common),
    )
    assert sorted([first["ok"], second["ok"]]) == [False, True]
    loser = first if not first["ok"] else second
    assert (loser["error"]["code"], loser["error"]["issues"]) == ("conflict", ["already_decided"])


async def test_the_same_request_sent_twice_at_once_runs_once(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    arguments = {"process": "doc-chain", "inputs": {"title": "Memo"}, "requestId": rid()}
    first, second = await asyncio.gather(
        server.call(AGENT, "start_run", dict(arguments)), server.call(AGENT, "start_run", dict(arguments))
    )
    assert first["ok"] and second["ok"]
    assert wire(first) == wire(second)
    assert len((await server.ok(AGENT, "list_runs"))["items"]) == 1
