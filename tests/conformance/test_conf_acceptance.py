"""Acceptance (spec §2.3, §3.2, §5, §6 rule 3; tools.md `submit`, `decide`, `start_run`).

Every issue at once with the exact strings tools.md lists, nothing changed on refusal, `next` on a
single-next step is `not_accepted`, one_of inside lists, numbers never rounded, and
`limits.runDataBytes` bounding inputs (`invalid`, as start_run reports input problems), submissions
and held event data (`not_accepted`: the acceptance rule's "nothing changes, every issue at once").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.org import ServerSettings
from tests.conformance.conformance_support import (
    AGENT,
    CHAIN,
    DESK,
    FIN1,
    LEGAL,
    MEMO,
    MEMO_BIND,
    SETTLEMENT,
    SIGN,
    VENDOR,
    VENDOR_BIND,
    Server,
    open_server,
    states,
    vendor_submission,
    work_item,
)

TYPED = """
---
name: typed-inputs
description: One input of every type.
inputs:
  s: string
  n: number
  b: boolean
  d: date
  dt: datetime
  l: { type: list, items: number }
  o: object
  p: person
  opt: { type: string, optional: true, one_of: [red, blue] }
steps:
  - id: work
    agent: Work.
  - id: done
    finish: done
---

Types.
"""
GOOD_INPUTS: dict[str, Any] = {
    "s": "text",
    "n": 1.5,
    "b": False,
    "d": "2026-02-28",
    "dt": "2026-10-07T09:00:00+02:00",
    "l": [1, 2.5],
    "o": {"any": ["thing"]},
    "p": LEGAL.id,
    "opt": "red",
}


async def test_a_submission_gets_every_issue_at_once_in_tools_md_wording(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    run_id = (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]
    claimed = await server.claim(run_id, "check_vendor")
    before = await server.view(run_id)
    await server.refused(
        AGENT,
        "submit",
        "not_accepted",
        [
            "summary: missing",
            "output.summary: missing",
            "output.cleared: expected boolean",
            "output.extra: not declared",
            "evidence: file required",
            "evidence f_000: not found",
            "next: required, one of approve, decline",
            "reason: required",
        ],
        token=claimed["token"],
        output={"cleared": "yes", "extra": 1},
        evidence=[{"kind": "file", "ref": "f_000"}],
        summary="   ",
    )
    assert await server.view(run_id) == before
    assert states(before)["check_vendor"] == "claimed"
    accepted = await server.ok(AGENT, "submit", **await vendor_submission(server, claimed["token"]))
    assert states(accepted)["approve"] == "waiting"


async def test_a_link_never_stands_in_for_a_file(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    run_id = (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]
    claimed = await server.claim(run_id, "check_vendor")
    arguments = await vendor_submission(server, claimed["token"])
    arguments["evidence"] = [{"kind": "link", "ref": "https://reports.example/acme.pdf"}]
    await server.refused(AGENT, "submit", "not_accepted", ["evidence: file required"], **arguments)
    arguments["next"], arguments["reason"] = "approve", " \n "
    arguments["evidence"] = (await vendor_submission(server, claimed["token"]))["evidence"]
    await server.refused(AGENT, "submit", "not_accepted", ["reason: required"], **arguments)
    arguments["reason"], arguments["next"] = "Cleared.", "accept"
    error = await server.refused(AGENT, "submit", "not_accepted", **arguments)
    assert len(error["issues"]) == 1 and error["issues"][0].startswith("next"), error


async def test_a_task_decision_gets_the_same_acceptance(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    view = await server.ok(
        AGENT, "submit", token=claimed["token"], output={"priority": "low"}, summary="Low."
    )
    item = work_item(view, "fix")
    await server.refused(
        LEGAL,
        "decide",
        "not_accepted",
        [
            "output.fixed: expected boolean",
            "output.extra: not declared",
            "evidence: link required",
            "next: required, one of confirm, abandon",
            "reason: required",
        ],
        runId=view["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"fixed": "no", "extra": 1},
        evidence=[],
    )
    assert await server.view(view["run"]["id"]) == view


async def test_next_on_a_single_next_step_is_not_accepted(server: Server) -> None:
    await server.publish(CHAIN, VENDOR_BIND)
    run_id = (await server.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    claimed = await server.claim(run_id, "draft")
    error = await server.refused(
        AGENT,
        "submit",
        "not_accepted",
        token=claimed["token"],
        output={"text": "t"},
        summary="Drafted.",
        next="polish",
        reason="Obvious.",
    )
    assert any(issue.startswith("next") for issue in error["issues"]), error
    await server.publish(MEMO, MEMO_BIND)
    memo = await server.start("memo-writing", {"topic": "x"})
    item = work_item(memo, "write")
    error = await server.refused(
        LEGAL,
        "decide",
        "not_accepted",
        runId=memo["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"memo": "m"},
        next="done",
        reason="Obvious.",
    )
    assert any(issue.startswith("next") for issue in error["issues"]), error
    assert states(await server.view(memo["run"]["id"]))["write"] == "waiting"


async def test_one_of_is_enforced_inside_lists(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    error = await server.refused(
        AGENT,
        "submit",
        "not_accepted",
        token=claimed["token"],
        output={"priority": "urgent", "tags": ["billing", "sales"]},
        summary="Hm.",
    )
    assert sorted(issue.split(":")[0].split("[")[0] for issue in error["issues"]) == [
        "output.priority",
        "output.tags",
    ], error
    done = await server.ok(
        AGENT,
        "submit",
        token=claimed["token"],
        output={"priority": "high", "tags": ["billing", "other"]},
        summary="Ok.",
    )
    assert done["data"]["steps"]["triage"]["output"] == {"priority": "high", "tags": ["billing", "other"]}


async def test_inputs_of_every_type_and_each_wrong_one(server: Server) -> None:
    await server.publish(TYPED, {})
    view = await server.start("typed-inputs", GOOD_INPUTS)
    assert view["data"]["inputs"] == GOOD_INPUTS
    wrong = {
        "s": 5,
        "n": "1.5",
        "b": "yes",
        "d": "2026-02-30",
        "dt": "2026-10-07T09:00:00",
        "l": [1, "2"],
        "o": [],
        "p": "not an email",
        "opt": "green",
    }
    for name, value in wrong.items():
        error = await server.refused(
            AGENT, "start_run", "invalid", process="typed-inputs", inputs={**GOOD_INPUTS, name: value}
        )
        assert len(error["issues"]) == 1 and error["issues"][0].startswith(f"inputs.{name}"), (name, error)
    error = await server.refused(AGENT, "start_run", "invalid", process="typed-inputs", inputs=wrong)
    assert len(error["issues"]) == len(wrong), error
    for inputs in (
        {**GOOD_INPUTS, "opt": None},
        {**GOOD_INPUTS, "extra": 1},
        {k: v for k, v in GOOD_INPUTS.items() if k != "s"},
    ):
        error = await server.refused(AGENT, "start_run", "invalid", process="typed-inputs", inputs=inputs)
        assert len(error["issues"]) == 1, error
    without_optional = {k: v for k, v in GOOD_INPUTS.items() if k != "opt"}
    assert (await server.start("typed-inputs", without_optional))["data"]["inputs"] == without_optional
    assert len((await server.ok(AGENT, "list_runs"))["items"]) == 2


async def test_numbers_are_never_rounded(server: Server) -> None:
    await server.publish(SIGN, VENDOR_BIND)
    big = 2**53 + 1
    view = await server.start("quick-sign", {"amount": big})
    claimed = await server.claim(view["run"]["id"], "prepare")
    assert claimed["data"]["inputs"]["amount"] == big
    done = await server.ok(
        AGENT, "submit", token=claimed["token"], output={"amount": 10**30 + 7}, summary="Big."
    )
    assert done["data"]["steps"]["prepare"]["output"]["amount"] == 10**30 + 7
    assert type(done["data"]["steps"]["prepare"]["output"]["amount"]) is int
    again = await server.view(view["run"]["id"])
    assert again["data"]["inputs"]["amount"] == big
    assert again["data"]["steps"]["prepare"]["output"]["amount"] == 10**30 + 7
    for fraction in (0.1, 1.0000000000000002, 1e-300):
        started = await server.start("quick-sign", {"amount": fraction})
        assert (await server.view(started["run"]["id"]))["data"]["inputs"]["amount"] == fraction


@pytest.fixture
async def capped(tmp_path: Path) -> Any:
    async with open_server(tmp_path, ServerSettings(run_data_bytes=1000)) as opened:
        yield opened


async def test_run_data_cap_bounds_inputs_at_start(capped: Server) -> None:
    cap = (await capped.ok(AGENT, "describe"))["limits"]["runDataBytes"]
    assert cap == 1000
    await capped.publish(CHAIN, VENDOR_BIND)
    await capped.refused(AGENT, "start_run", "invalid", process="doc-chain", inputs={"title": "x" * cap})
    assert (await capped.ok(AGENT, "list_runs"))["items"] == []
    await capped.start("doc-chain", {"title": "x" * (cap // 4)})


async def test_run_data_cap_bounds_submissions_and_decisions(capped: Server) -> None:
    await capped.publish(CHAIN, VENDOR_BIND)
    run_id = (await capped.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    draft = await capped.claim(run_id, "draft")
    await capped.refused(
        AGENT, "submit", "not_accepted", token=draft["token"], output={"text": "d" * 1000}, summary="Long."
    )
    view = await capped.ok(AGENT, "submit", token=draft["token"], output={"text": "d" * 400}, summary="Fits.")
    polish = await capped.claim(run_id, "polish")
    before = await capped.view(run_id)
    error = await capped.refused(
        AGENT,
        "submit",
        "not_accepted",
        token=polish["token"],
        output={"text": "p" * 400},
        summary="Also fits alone.",
    )
    assert len(error["issues"]) == 1, error
    assert await capped.view(run_id) == before
    await capped.ok(AGENT, "submit", token=polish["token"], output={"text": "p" * 50}, summary="Short.")
    await capped.publish(MEMO, MEMO_BIND)
    memo = await capped.start("memo-writing", {"topic": "x"})
    item = work_item(memo, "write")
    await capped.refused(
        LEGAL,
        "decide",
        "not_accepted",
        runId=memo["run"]["id"],
        workItemId=item["id"],
        snapshot=item["snapshot"],
        decision="completed",
        output={"memo": "m" * 1000},
    )
    assert states(view)["polish"] == "ready"


async def test_run_data_cap_bounds_held_event_data(capped: Server) -> None:
    await capped.publish(SETTLEMENT, {})
    run_id = (await capped.start("settlement", {"ref": "S-1"}))["run"]["id"]
    await capped.refused(
        AGENT, "send_event", "not_accepted", runId=run_id, name="payment", data={"blob": "b" * 1000}
    )
    await capped.ok(AGENT, "send_event", runId=run_id, name="payment", data={"n": 1})
    claimed = await capped.claim(run_id, "request")
    view = await capped.ok(AGENT, "submit", token=claimed["token"], output={"sent": True}, summary="Sent.")
    assert view["data"]["steps"]["first_payment"]["output"] == {"n": 1}
    assert states(view)["second_payment"] == "waiting"


async def test_an_agent_cannot_start_a_process_with_an_initiator_step(server: Server) -> None:
    """tools.md `start_run`: any step assigned to `initiator` with an agent caller is `invalid`."""
    await server.publish(DESK, {})
    await server.refused(
        AGENT, "start_run", "invalid", process="desk-work", inputs={"ticket": "T", "owner": LEGAL.id}
    )
    assert (await server.ok(AGENT, "list_runs"))["items"] == []
    assert (await server.start("desk-work", {"ticket": "T", "owner": LEGAL.id}, who=LEGAL))["run"][
        "state"
    ] == "active"


async def test_the_cap_on_a_submission_is_reported_with_every_other_issue_at_once(capped: Server) -> None:
    """§6 rule 3 lists the cap among the acceptance conditions and wants "every issue at once": an
    oversized submission with another problem gets both issues in one answer, not one per round trip."""
    await capped.publish(CHAIN, VENDOR_BIND)
    run_id = (await capped.start("doc-chain", {"title": "Memo"}))["run"]["id"]
    draft = await capped.claim(run_id, "draft")
    error = await capped.refused(
        AGENT,
        "submit",
        "not_accepted",
        token=draft["token"],
        output={"text": "d" * 1000, "extra": 1},
        summary="Long.",
    )
    assert "output.extra: not declared" in error["issues"]
    assert len(error["issues"]) == 2, error["issues"]


async def test_the_cap_on_inputs_is_reported_with_every_other_issue_at_once(capped: Server) -> None:
    await capped.publish(CHAIN, VENDOR_BIND)
    error = await capped.refused(
        AGENT, "start_run", "invalid", process="doc-chain", inputs={"title": "t" * 1000, "extra": 1}
    )
    assert "inputs.extra: not declared" in error["issues"]
    assert len(error["issues"]) == 2, error["issues"]
