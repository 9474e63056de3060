"""Demo people decide their own work items through the engine as themselves, after a think time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.seed import publish_approval, seed_approvals
from console.live.paging import PAGE
from demo.actors.agent import AgentBehaviour, DemoAgent
from demo.actors.link import EngineLink
from demo.actors.people import FAIL_NOTE, REJECT_NOTES, RETURN_NOTES, DemoPeople, PeopleBehaviour
from demo.world.org import DemoOrg
from demo.world.pace import ManualPace
from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity, agent, person
from engine.tools.told import Told
from tests.demo.demo_support import AGENT_A, AGENT_B, MIRA, OPERATOR, make_org, rid, schema_problems

QUIET = AgentBehaviour(work_minutes=(0, 0), escalate_share=0, incomplete_share=0, lapse_share=0)
STEADY = PeopleBehaviour(think_minutes=(5, 5), slow_share=0, reject_share=0, return_share=1, fail_share=0)


def demo_org() -> DemoOrg:
    return DemoOrg(
        make_org(), {}, (AGENT_A,), operator_email=OPERATOR, person_pool=(MIRA,), event_feed_id=AGENT_B
    )


def people(engine: Engine, clock: ManualClock, behaviour: PeopleBehaviour) -> DemoPeople:
    return DemoPeople(engine, demo_org(), ManualPace(clock), behaviour=behaviour, seed=3)


def bot(engine: Engine, clock: ManualClock, behaviour: AgentBehaviour = QUIET) -> DemoAgent:
    return DemoAgent(
        AGENT_A, lambda: EngineLink(engine, agent(AGENT_A)), ManualPace(clock), behaviour=behaviour
    )


async def start(engine: Engine, process: str, inputs: dict[str, Any]) -> str:
    started = await engine.call(
        person(MIRA), "start_run", {"process": process, "inputs": inputs, "requestId": rid()}
    )
    assert started["ok"], started
    return started["data"]["run"]["id"]


async def view(engine: Engine, run_id: str) -> dict[str, Any]:
    return (await engine.call(person(MIRA), "get_run", {"runId": run_id}))["data"]


async def test_an_approval_is_rejected_once_with_a_note_then_approved(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = await start(engine, "screening", {"vendorName": "Acme"})
    worker = bot(engine, clock)
    deciders = people(engine, clock, PeopleBehaviour(**{**STEADY.__dict__, "reject_share": 1}))
    assert await worker.work_once() is True
    assert await deciders.poll() == 0, "the think time has not passed"
    clock.advance(minutes=5)
    assert await deciders.poll() == 1
    data = await view(engine, run_id)
    rejected = data["data"]["steps"]["approve"]
    assert (rejected["decision"], rejected["by"], rejected["note"] in REJECT_NOTES) == (
        "rejected",
        MIRA,
        True,
    )
    assert {s["id"]: s["state"] for s in data["steps"]}["check_vendor"] == "ready"

    assert await worker.work_once() is True
    assert await deciders.poll() == 0
    clock.advance(minutes=5)
    assert await deciders.poll() == 1
    data = await view(engine, run_id)
    assert (data["run"]["state"], data["run"]["outcome"]) == ("ended", "onboarded")
    assert [h["decision"] for h in data["data"]["steps"]["approve"]["history"]] == ["rejected"]
    assert dict(deciders.decisions) == {"approve:rejected": 1, "approve:approved": 1}
    assert schema_problems(data) == []


async def test_a_slow_person_lets_the_item_go_overdue_first(engine: Engine, clock: ManualClock) -> None:
    run_id = await start(engine, "screening", {"vendorName": "Acme"})
    await bot(engine, clock).work_once()
    deciders = people(engine, clock, PeopleBehaviour(**{**STEADY.__dict__, "slow_share": 1}))
    assert await deciders.poll() == 0
    clock.advance(minutes=61)
    await engine.tick()
    assert await deciders.poll() == 0, "slow people decide 2 to 10 minutes after the due"
    approve = next(s for s in (await view(engine, run_id))["steps"] if s["id"] == "approve")
    assert (approve["state"], approve["overdue"]) == ("waiting", True)
    clock.advance(minutes=10)
    assert await deciders.poll() == 1
    assert (await view(engine, run_id))["run"]["outcome"] == "onboarded"


async def test_a_task_is_completed_with_output_file_evidence_and_a_route(
    engine: Engine, clock: ManualClock
) -> None:
    run_ids = [await start(engine, "intake", {"requestTitle": f"Laptop {i}"}) for i in range(4)]
    deciders = people(engine, clock, STEADY)
    assert await deciders.poll() == 0
    clock.advance(minutes=5)
    assert await deciders.poll() == 4
    for run_id in run_ids:
        data = await view(engine, run_id)
        record = data["data"]["steps"]["clarify"]
        outcome = data["run"]["outcome"]
        assert (record["next"], outcome) in (("filed", "filed"), ("dropped", "withdrawn"))
        assert record["by"] == MIRA and isinstance(record["output"]["justification"], str)
        [file] = record["evidence"]
        assert (file["kind"], len(file["sha256"])) == ("file", 64)
        assert record["summary"].startswith("Done: Describe the request. Recorded justification = ")
        assert schema_problems(data) == []
    assert dict(deciders.decisions) == {"task:completed": 4}


async def escalated_and_decided(
    engine: Engine, clock: ManualClock, behaviour: PeopleBehaviour
) -> tuple[dict[str, Any], dict[str, int]]:
    run_id = await start(engine, "screening", {"vendorName": "Acme"})
    assert (
        await bot(engine, clock, AgentBehaviour(**{**QUIET.__dict__, "escalate_share": 1})).work_once()
        is True
    )
    deciders = people(engine, clock, behaviour)
    assert await deciders.poll() == 0
    clock.advance(minutes=5)
    assert await deciders.poll() == 1
    return await view(engine, run_id), dict(deciders.decisions)


async def test_the_operator_returns_an_escalation_with_a_note(engine: Engine, clock: ManualClock) -> None:
    data, counts = await escalated_and_decided(engine, clock, STEADY)
    step = next(s for s in data["steps"] if s["id"] == "check_vendor")
    assert (step["state"], counts) == ("ready", {"agent:returned": 1})
    work = await engine.call(agent(AGENT_A), "get_work", {})
    [item] = work["data"]["items"]
    assert (item["handoff"]["returned"]["by"], item["handoff"]["returned"]["note"] in RETURN_NOTES) == (
        OPERATOR,
        True,
    )


async def test_the_operator_completes_an_escalation_in_the_agents_place(
    engine: Engine, clock: ManualClock
) -> None:
    data, counts = await escalated_and_decided(
        engine, clock, PeopleBehaviour(**{**STEADY.__dict__, "return_share": 0})
    )
    record = data["data"]["steps"]["check_vendor"]
    assert (record["by"], "findings" in record["output"], counts) == (OPERATOR, True, {"agent:completed": 1})


async def test_the_operator_fails_an_escalation(engine: Engine, clock: ManualClock) -> None:
    data, counts = await escalated_and_decided(
        engine, clock, PeopleBehaviour(**{**STEADY.__dict__, "fail_share": 1})
    )
    run = data["run"]
    assert (run["outcome"], run["ended"]["note"], counts) == ("failed", FAIL_NOTE, {"agent:failed": 1})


async def test_people_leave_the_operators_items_alone_when_a_person_runs_the_console(
    engine: Engine, clock: ManualClock
) -> None:
    await start(engine, "screening", {"vendorName": "Acme"})
    await bot(engine, clock, AgentBehaviour(**{**QUIET.__dict__, "escalate_share": 1})).work_once()
    operator = Identity("person", OPERATOR, operator=True)
    started = await engine.call(
        operator, "start_run", {"process": "intake", "inputs": {"requestTitle": "Desk"}, "requestId": rid()}
    )
    assert started["ok"], started
    deciders = people(engine, clock, PeopleBehaviour(**{**STEADY.__dict__, "play_operator": False}))
    await deciders.poll()
    clock.advance(hours=3)
    assert await deciders.poll() == 0
    queue = await engine.call(operator, "get_work", {})
    assert sorted(i["workItem"]["kind"] for i in queue["data"]["items"]) == ["agent", "task"]


async def test_an_escalation_already_returned_once_is_completed_not_returned_again(
    engine: Engine, clock: ManualClock
) -> None:
    run_id = await start(engine, "screening", {"vendorName": "Acme"})
    deciders = people(engine, clock, STEADY)
    for round_ in (1, 2):
        claimed = await engine.call(
            agent(AGENT_A), "claim", {"runId": run_id, "stepId": "check_vendor", "requestId": rid()}
        )
        assert claimed["ok"], claimed
        escalated = await engine.call(
            agent(AGENT_A),
            "escalate",
            {"token": claimed["data"]["token"], "note": f"Stuck, round {round_}.", "requestId": rid()},
        )
        assert escalated["ok"], escalated
        assert await deciders.poll() == 0
        clock.advance(minutes=5)
        assert await deciders.poll() == 1
    assert dict(deciders.decisions) == {"agent:returned": 1, "agent:completed": 1}
    data = await view(engine, run_id)
    assert data["data"]["steps"]["check_vendor"]["by"] == OPERATOR
    assert {s["id"]: s["state"] for s in data["steps"]}["approve"] == "waiting"


class Reads:
    """The engine as the demo people call it, noting each `get_work`: who, its limit, whether from a cursor."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.calls: list[tuple[str, int, bool]] = []

    @property
    def told(self) -> Told:
        return self.engine.told

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if tool == "get_work":
            self.calls.append((identity.id, arguments["limit"], "cursor" in arguments))
        return await self.engine.call(identity, tool, arguments)

    def taken(self) -> list[tuple[str, int, bool]]:
        """The calls since the last look."""
        calls, self.calls = self.calls, []
        return calls


async def test_a_person_reads_their_queue_again_only_when_told_of_new_work(
    engine: Engine, clock: ManualClock
) -> None:
    reads = Reads(engine)
    deciders = DemoPeople(reads, demo_org(), ManualPace(clock), behaviour=STEADY, seed=3)
    assert await deciders.poll() == 0
    assert reads.taken() == [(MIRA, PAGE, False), (OPERATOR, PAGE, False)], "each reads once"
    assert await deciders.poll() == 0
    assert reads.taken() == [], "nothing new: nobody reads"
    run_id = await start(engine, "screening", {"vendorName": "Acme"})
    assert await deciders.poll() == 0
    assert reads.taken() == [], "the agent's step first: no person is told"
    await bot(engine, clock).work_once()
    assert await deciders.poll() == 0
    assert reads.taken() == [(MIRA, PAGE, False)], "the approval opened for Mira's group"
    clock.advance(minutes=4)
    assert await deciders.poll() == 0
    assert reads.taken() == []
    clock.advance(minutes=1)
    assert await deciders.poll() == 1, "decided when its think time is over, from the page read then"
    assert reads.taken() == []
    assert (await view(engine, run_id))["run"]["outcome"] == "onboarded"
    assert await deciders.poll() == 0
    assert reads.taken() == [(MIRA, PAGE, False)], "told the run she started ended"


async def test_a_full_page_takes_in_only_what_comes_into_it_for_the_items_decided(
    engine: Engine, clock: ManualClock, tmp_path: Path
) -> None:
    await publish_approval(engine, tmp_path / "bulk", "g_finance")
    await seed_approvals(engine, clock, PAGE + 2)
    reads = Reads(engine)
    deciders = DemoPeople(reads, demo_org(), ManualPace(clock), behaviour=STEADY, seed=3)
    assert await deciders.poll() == 0
    assert reads.taken() == [(MIRA, PAGE, False), (OPERATOR, PAGE, False)]
    clock.advance(minutes=5)
    assert await deciders.poll() == PAGE
    assert reads.taken() == []
    assert await deciders.poll() == 0
    assert reads.taken() == [(MIRA, PAGE, True)], "the two past the page, from where it ended"
    clock.advance(minutes=5)
    assert await deciders.poll() == 2
    assert await deciders.poll() == 0
    assert reads.taken() == [], "the page held the rest of the queue: nothing more to read"
    assert dict(deciders.decisions) == {"approve:approved": PAGE + 2}


async def test_a_failed_decision_reads_the_whole_page_again(engine: Engine, clock: ManualClock) -> None:
    operator = Identity("person", OPERATOR, operator=True)
    started = await engine.call(
        operator, "start_run", {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()}
    )
    run_id = started["data"]["run"]["id"]
    await bot(engine, clock).work_once()
    reads = Reads(engine)
    deciders = DemoPeople(reads, demo_org(), ManualPace(clock), behaviour=STEADY, seed=3)
    assert await deciders.poll() == 0
    reads.taken()
    cancelled = await engine.call(operator, "cancel", {"runId": run_id, "reason": "No.", "requestId": rid()})
    assert cancelled["ok"], cancelled
    clock.advance(minutes=5)
    assert await deciders.poll() == 0, "Mira's item went with its run, and she was not told"
    assert reads.taken() == [(OPERATOR, PAGE, False)], "the operator started the run: told it ended"
    assert await deciders.poll() == 0
    assert reads.taken() == [(MIRA, PAGE, False)]
