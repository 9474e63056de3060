"""A demo agent works the loop of guides/adding-support.md against a real engine: in-process on a
ManualClock for exact behaviour, and over MCP with the SDK client as any third-party agent would."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from mcp.client.session import ClientSession

from demo.actors import link
from demo.actors.agent import AgentBehaviour, DemoAgent
from demo.actors.control import DemoControl
from demo.actors.link import EngineLink, McpAgentLink
from demo.work.draft import TEST_NOTE
from demo.work.handoff import Handoff
from demo.world.pace import ManualPace
from engine.clock import ManualClock
from engine.core import Engine
from engine.http.app import RunningServer
from engine.identity import Identity, agent, person
from tests.demo.demo_support import (
    AGENT_A,
    AGENT_B,
    AGENT_TOKENS,
    LEASE_SECONDS,
    MIRA,
    OPERATOR,
    rid,
    schema_problems,
    until,
)

QUIET = AgentBehaviour(
    work_minutes=(3, 3), parts=3, long_work_minutes=10, escalate_share=0, incomplete_share=0, lapse_share=0
)
FIRST_SENTENCE = "Check the vendor against the sanctions lists."


def make_agent(
    engine: Engine,
    clock: ManualClock,
    name: str,
    behaviour: AgentBehaviour,
    control: DemoControl | None = None,
) -> DemoAgent:
    return DemoAgent(
        name,
        lambda: EngineLink(engine, agent(name)),
        ManualPace(clock),
        behaviour=behaviour,
        seed=1,
        control=control,
    )


async def start(engine: Engine, process: str = "screening", mode: str = "live") -> str:
    inputs = {"vendorName": "Acme"} if process == "screening" else {"requestTitle": "Laptop"}
    started = await engine.call(
        person(MIRA), "start_run", {"process": process, "inputs": inputs, "mode": mode, "requestId": rid()}
    )
    assert started["ok"], started
    return started["data"]["run"]["id"]


async def view(engine: Engine, run_id: str) -> dict[str, Any]:
    result = await engine.call(person(MIRA), "get_run", {"runId": run_id})
    assert result["ok"], result
    return result["data"]


def states(data: dict[str, Any]) -> dict[str, str]:
    return {s["id"]: s["state"] for s in data["steps"]}


async def test_an_agent_claims_works_and_submits_with_a_summary(engine: Engine, clock: ManualClock) -> None:
    run_id = await start(engine)
    bot = make_agent(engine, clock, AGENT_A, QUIET)
    began = clock.now()
    assert await bot.work_once() is True
    assert (clock.now() - began).total_seconds() == 180
    data = await view(engine, run_id)
    record = data["data"]["steps"]["check_vendor"]
    assert states(data) == {"check_vendor": "done", "approve": "waiting", "done": None}
    assert list(record["output"]) == ["findings"] and isinstance(record["output"]["findings"], str)
    assert record["summary"] == bot.last_summary
    findings = json.dumps(record["output"]["findings"])
    shown = findings if len(findings) <= 40 else findings[:39] + "…"
    assert bot.last_summary == f"Done: {FIRST_SENTENCE} Recorded findings = {shown}."
    assert (bot.state.claimed, bot.state.submitted, bot.state.status, bot.state.holding) == (
        1,
        1,
        "idle",
        None,
    )
    assert list(bot.state.recent) == [
        "connected (core-2, lease 600s)",
        "claimed screening · check_vendor",
        "submitted check_vendor",
    ]
    assert schema_problems(data) == []
    assert await bot.work_once() is False


async def test_long_work_renews_between_parts_with_progress(engine: Engine, clock: ManualClock) -> None:
    await start(engine)
    bot = make_agent(
        engine,
        clock,
        AGENT_A,
        AgentBehaviour(**{**QUIET.__dict__, "work_minutes": (12, 12), "long_work_minutes": 3}),
    )
    assert await bot.work_once() is True
    assert list(bot.state.recent) == [
        "connected (core-2, lease 600s)",
        "claimed screening · check_vendor",
        "renewed with progress: " + f"Done 1 of 3 parts: {FIRST_SENTENCE}"[:60],
        "renewed with progress: " + f"Done 2 of 3 parts: {FIRST_SENTENCE}"[:60],
        "submitted check_vendor",
    ]


async def test_the_next_claimant_reads_progress_and_issues_and_acts_on_them(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = await start(engine)
    lapsing = make_agent(
        engine, clock, AGENT_A, AgentBehaviour(**{**QUIET.__dict__, "lapse_share": 1, "incomplete_share": 1})
    )
    assert await lapsing.work_once() is True
    assert (lapsing.state.lapsed, lapsing.state.submitted) == (1, 0)
    assert states(await view(engine, run_id))["check_vendor"] == "claimed"

    clock.advance(LEASE_SECONDS)
    progress = f"Done 1 of 3 parts: {FIRST_SENTENCE}"
    listed = await engine.call(agent(AGENT_B), "get_work", {})
    assert [(i["stepId"], i["handoff"]) for i in listed["data"]["items"]] == [
        ("check_vendor", {"issues": ["output.findings: missing"], "progress": progress})
    ]

    careful = make_agent(engine, clock, AGENT_B, QUIET)
    began = clock.now()
    assert await careful.work_once() is True
    assert careful.last_handoff == Handoff(progress=progress, issues=("output.findings: missing",))
    assert (clock.now() - began).total_seconds() == 120, "the part the progress note covers is not redone"
    data = await view(engine, run_id)
    record = data["data"]["steps"]["check_vendor"]
    assert states(data)["approve"] == "waiting"
    assert "findings" in record["output"]
    assert record["summary"] == careful.last_summary
    assert careful.last_summary is not None
    assert careful.last_summary.endswith(
        f" Picked up after an expired lease from the note '{progress}' and did not redo that part."
        " The previous submission was refused (output.findings: missing); this one fixes each issue."
    )
    assert careful.state.recent[1] == "claimed screening · check_vendor (handoff: progress, issues)"


async def test_a_refused_submission_is_fixed_from_its_issues(engine: Engine, clock: ManualClock) -> None:
    run_id = await start(engine)
    bot = make_agent(engine, clock, AGENT_A, AgentBehaviour(**{**QUIET.__dict__, "incomplete_share": 1}))
    assert await bot.work_once() is True
    assert (bot.state.refused, bot.state.submitted) == (1, 1)
    assert bot.state.recent[2] == "not accepted: output.findings: missing; fixing"
    assert bot.last_summary is not None
    assert bot.last_summary.endswith(
        " Fixed after the server refused the first submission: output.findings: missing."
    )
    assert states(await view(engine, run_id))["check_vendor"] == "done"


async def test_an_escalation_returned_with_a_note_is_finished_not_escalated_again(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = await start(engine, mode="test")
    escalating = AgentBehaviour(**{**QUIET.__dict__, "escalate_share": 1})
    first = make_agent(engine, clock, AGENT_A, escalating)
    assert await first.work_once() is True
    assert first.state.escalated == 1
    operator = Identity("person", OPERATOR, operator=True)
    queue = await engine.call(operator, "get_work", {})
    [entry] = queue["data"]["items"]
    note = entry["workItem"]["escalation"]["note"]
    assert note.startswith("Cannot finish check_vendor: ") and note.endswith(
        " (Test run: no external effects.)"
    )
    assert f"What I did: {FIRST_SENTENCE} A person needs to check the record" in note
    returned = await engine.call(
        operator,
        "decide",
        {
            **entry["workItem"]["decide"]["arguments"],
            "decision": "returned",
            "note": "Search by legal name.",
            "requestId": rid(),
        },
    )
    assert returned["ok"], returned

    second = make_agent(engine, clock, AGENT_B, escalating)
    assert await second.work_once() is True
    assert (second.state.escalated, second.state.submitted) == (0, 1)
    assert second.last_summary is not None
    assert second.last_summary.endswith(
        f" Returned by {OPERATOR} with the note 'Search by legal name.'; followed it. {TEST_NOTE}"
    )
    assert states(await view(engine, run_id))["check_vendor"] == "done"


async def test_pause_comes_from_the_control(engine: Engine, clock: ManualClock) -> None:
    control = DemoControl()
    await start(engine)
    bot = make_agent(engine, clock, AGENT_A, QUIET, control)
    control.pause(AGENT_A)
    assert (bot.state.status, bot.state.last_action) == ("paused", "paused by the operator")
    task = asyncio.create_task(bot.run())
    try:
        await until(lambda: bot.state.last_action.startswith("connected"))
        await asyncio.sleep(0)
        assert bot.state.claimed == 0
        began = clock.now()
        control.resume(AGENT_A)
        await until(lambda: bot.state.submitted == 1)
        assert (clock.now() - began).total_seconds() == 180
        assert re.fullmatch(r"09:0\d:\d\d (submit check_vendor|get_work) → ok", bot.state.last_call), (
            "the last call: the submission, or the look for more work after it"
        )
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert bot.state.status == "stopped"


async def test_over_mcp_an_agent_submits_file_and_link_evidence_and_a_route(
    engine: Engine, clock: ManualClock, server: RunningServer
) -> None:
    run_ids = [await start(engine, "review") for _ in range(3)]
    bot = DemoAgent(
        AGENT_A,
        lambda: McpAgentLink(server.url, AGENT_TOKENS[AGENT_A]),
        ManualPace(clock),
        behaviour=QUIET,
        seed=7,
    )
    try:
        for _ in run_ids:
            assert await bot.work_once() is True
        assert await bot.work_once() is False
    finally:
        await bot.disconnect()
    for run_id in run_ids:
        data = await view(engine, run_id)
        assert schema_problems(data) == []
        record = data["data"]["steps"]["assess"]
        [file, link] = record["evidence"]
        assert (file["kind"], len(file["sha256"]), file["url"].startswith("http://127.0.0.1:")) == (
            "file",
            64,
            True,
        )
        assert link == {"kind": "link", "ref": f"https://records.example.com/review/{run_id}/assess"}
        outcome = data["run"]["outcome"]
        assert (record["next"], outcome) in (("accept", "accepted"), ("decline", "declined"))
        assert record["output"]["eligible"] is (outcome == "accepted")
        assert (
            record["reason"]
            == {
                "accepted": "Chose accept: Eligible and 100 or less.",
                "declined": "Chose decline: Not eligible under the policy.",
            }[outcome]
        )


async def test_links_compile_each_output_schema_once_between_them(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(link, "COMPILED", {})
    compiled: list[str] = []
    sdk = ClientSession._output_schema_validator

    def compiling(session: ClientSession, name: str, schema: dict[str, Any]) -> Any:
        compiled.append(name)
        return sdk(session, name, schema)

    monkeypatch.setattr(ClientSession, "_output_schema_validator", compiling)
    links = [await McpAgentLink(server.url, AGENT_TOKENS[name]).open() for name in (AGENT_A, AGENT_B)]
    try:
        for each in links * 2:
            assert (await each.call("describe", {}))["ok"]
            assert (await each.call("get_work", {}))["ok"]
    finally:
        for each in reversed(links):
            await each.close()
    assert compiled == ["describe", "get_work"]
