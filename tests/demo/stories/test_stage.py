"""The stage menu: each moment, triggered now on a fresh run, produces the state it names, read over
MCP as the operator (through `apc_demo_control` to stage it, `get_run` to look)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from demo.actors.link import McpAgentLink
from demo.stories.stage import MOMENTS, record, step_state
from tests.demo.demo_support import conducted, turn_until


async def test_each_stage_moment_produces_the_state_it_names(tmp_path: Path) -> None:
    async with conducted(tmp_path, agents=3) as system:
        operator = await McpAgentLink(system.server.url, system.org.tokens[system.org.operator_email]).open()
        try:
            runs: dict[str, str] = {}
            for m in MOMENTS:
                staged = await operator.call("apc_demo_control", {"action": "stage", "moment": m.name})
                assert staged["ok"], staged
                assert staged["data"]["message"].startswith(f"{m.title}: r_")
                runs[m.name] = staged["data"]["message"].split(": ")[1].split(".")[0]

            async def view(name: str) -> dict[str, Any]:
                answer = await operator.call("get_run", {"runId": runs[name]})
                assert answer["ok"], answer
                data: dict[str, Any] = answer["data"]
                return data

            async def all_reached() -> bool:
                views = [await view(m.name) for m in MOMENTS]
                return all(m.reached(v) for m, v in zip(MOMENTS, views, strict=True))

            await turn_until(system, all_reached)
            await check_states(view, system)
        finally:
            await system.disconnect_agents()  # opened after the operator's link: closed first
            await operator.close()


async def check_states(view: Any, system: Any) -> None:
    """Each moment's state, asserted field by field (not through the moment's own test of it)."""
    agents = set(system.org.agents)

    escalated = await view("escalation")
    [item] = [w for w in escalated["workItems"] if w["stepId"] == "verify_order"]
    assert item["assignedTo"] == {"group": "operators"}
    assert item["escalation"]["by"] in agents and "check" not in item["escalation"]
    order = escalated["data"]["inputs"]["orderId"]
    assert f"order {order}" in item["escalation"]["note"], "the note names the order it could not find"
    assert item["escalation"]["note"].startswith("Cannot finish verify_order: ")
    assert step_state(escalated, "verify_order")["state"] == "waiting"

    fixed = await view("refused-then-fixed")
    done = record(fixed, "verify_order")
    assert done["check"]["verdict"] == "pass"
    assert (done["output"]["eligible"], done["output"]["approvedAmount"]) == (True, 64.9)
    assert "Revised after the model check answered 'The eligible verdict agrees" in done["summary"]
    assert "eligible is now true" in done["summary"], (
        "the check refused the verdict; the agent turned it over"
    )

    unsure = await view("unsure-check")
    [held] = [w for w in unsure["workItems"] if w["stepId"] == "verify_order"]
    assert held["escalation"]["by"] == "server"
    assert held["escalation"]["check"]["verdict"] == "unsure"
    assert held["escalation"]["candidate"]["output"]["daysSinceDelivery"] == 12
    assert held["decide"]["decisions"] == ["returned", "completed", "failed"]

    reworked = await view("rework")
    review = record(reworked, "review_request")
    [before] = [h for h in review["history"] if "output" in h]
    assert before["output"]["budgetRemaining"] != review["output"]["budgetRemaining"], "the diff"
    assert review["output"]["budgetRemaining"] >= reworked["data"]["inputs"]["amount"], "still within budget"
    assert "Reworked after fiona@example.com rejected it" in review["summary"]
    assert "budgetRemaining from " in review["summary"]

    lapsed = await view("lease-lapse")
    picked = record(lapsed, "assess_vendor")
    lapser = next(a.name for a in system.agents if a.state.lapsed == 1)
    assert picked["by"] in agents - {lapser}, "another agent picked the step up"
    assert "Picked up after an expired lease from the note 'Done 1 of 3 parts" in picked["summary"]

    late = await view("overdue")
    assert step_state(late, "lead_approval")["overdue"] is True
    assert step_state(late, "lead_approval")["state"] == "waiting"
    assert [w["stepId"] for w in late["workItems"]] == ["lead_approval"], "left to the presenter: undecided"

    joined = await view("fork-join")
    assert [step_state(joined, s)["state"] for s in ("prepare", "enroll_device", "create_accounts")] == [
        "done",
        "done",
        "done",
    ]
    assert step_state(joined, "book_courier")["state"] is not None
    assert record(joined, "create_accounts")["output"]["groups"] == ["all-staff", "engineering"]
