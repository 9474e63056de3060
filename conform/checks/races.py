"""Two callers at the same moment: the first write wins, the other is told who got there first
(spec §6 rule 2, §3.4, the housekeeping rule). These checks send both calls at once, so a server
that reads then writes without holding the run in between lets both succeed.
"""

from __future__ import annotations

import asyncio

from conform.checks.common import chain_run
from conform.expect import equal
from conform.registry import check
from conform.session import Session, work_item


@check(
    "agent.claim-race",
    "spec §6 rule 2 and the housekeeping rule",
    covers=("claim/conflict:claimed_by_other",),
)
async def claim_race(s: Session) -> None:
    """Two agents claiming at the same moment: one wins, the other is told it is claimed by another."""
    run_id = await chain_run(s)
    first, second = await asyncio.gather(
        s.send(s.agent, "claim", runId=run_id, stepId="draft"),
        s.send(s.agent2, "claim", runId=run_id, stepId="draft"),
    )
    equal("outcomes", sorted([first["ok"], second["ok"]]), [False, True])
    loser = first if not first["ok"] else second
    equal(
        "the loser's error",
        (loser["error"]["code"], loser["error"].get("issues")),
        ("conflict", ["claimed_by_other"]),
    )
    s.cover("claim/conflict:claimed_by_other")


@check(
    "people.first-decision-wins",
    "spec §3.4 (the first decision wins), the housekeeping rule",
    covers=("decide/conflict:already_decided",),
)
async def first_decision_wins(s: Session) -> None:
    """Two group members deciding at the same moment: one decision counts, the other is told."""
    run_id = (await s.start("conform-chain", {"title": "Memo"}))["run"]["id"]
    await s.work(run_id, "draft", {"text": "t"})
    view = await s.work(run_id, "polish", {"text": "t"})
    item = work_item(view, "approve")
    common = {"runId": run_id, "workItemId": item["id"], "snapshot": item["snapshot"], "decision": "rejected"}
    first, second = await asyncio.gather(
        s.send(s.person1, "decide", note="Redo A.", **common),
        s.send(s.person2, "decide", note="Redo B.", **common),
    )
    equal("outcomes", sorted([first["ok"], second["ok"]]), [False, True])
    loser = first if not first["ok"] else second
    equal(
        "the loser's error",
        (loser["error"]["code"], loser["error"].get("issues")),
        ("conflict", ["already_decided"]),
    )
    s.cover("decide/conflict:already_decided")
