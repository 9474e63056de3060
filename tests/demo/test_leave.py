""" "Leave this to me": a work item (its step) or a whole run the presenter took over is never decided by
the demo people while it is on, through reworks and overdue, for the whole run; toggled off, they
decide it again."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from demo.actors.director import Cue, Cued
from demo.system import DemoSystem
from engine.identity import Identity
from tests.demo.demo_support import conducted, turn_until

FIONA = Identity("person", "fiona@example.com")


async def start(system: DemoSystem, process: str, given: dict[str, Any]) -> str:
    inputs = system.starter.inputs_for(system.processes[process], system.clock.now(), given)
    started = await system.starter.start(process, inputs, mode="live")
    assert started is not None, system.starter.refused
    return started.run_id


async def view(system: DemoSystem, run_id: str) -> dict[str, Any]:
    answer = await system.engine.call(system.operator, "get_run", {"runId": run_id})
    assert answer["ok"], answer
    data: dict[str, Any] = answer["data"]
    return data


def open_steps(data: dict[str, Any]) -> list[str]:
    return [w["stepId"] for w in data["workItems"]]


async def decide(system: DemoSystem, who: Identity, item: dict[str, Any], **extra: Any) -> None:
    args = {**item["decide"]["arguments"], **extra, "requestId": str(uuid.uuid4())}
    answer = await system.engine.call(who, "decide", args)
    assert answer["ok"], answer


async def test_a_step_left_to_the_presenter_stays_theirs_through_rework_and_overdue(tmp_path: Path) -> None:
    async with conducted(tmp_path) as system:
        run_id = await start(system, "purchase-order-approval", {})
        system.director.cue_run(
            Cued(run_id, "test", {"review_request": Cue(pin={"withinBudget": True, "vendorActive": True})})
        )
        left = await system.presenter.control("leave", {"runId": run_id, "stepId": "finance_approval"})
        assert (
            left["message"] == f"Left to you: finance_approval of {run_id}. Demo people will not decide it."
        )
        assert left["left"] == [f"{run_id} · finance_approval"]

        async def waiting() -> bool:
            return open_steps(await view(system, run_id)) == ["finance_approval"]

        await turn_until(system, waiting, seconds=60)
        first = (await view(system, run_id))["workItems"][0]
        for _ in range(75):  # two and a half demo hours: far past the approval's hour
            await system.turn(120)
        data = await view(system, run_id)
        assert [w["id"] for w in data["workItems"]] == [first["id"]], "nobody decided it"
        assert next(s for s in data["steps"] if s["id"] == "finance_approval")["overdue"] is True
        assert system.people.decisions == {}, "the demo people decided nothing at all"

        await decide(system, FIONA, first, decision="rejected", note="Use today's budgetRemaining figure.")
        await turn_until(system, waiting, seconds=60)
        second = (await view(system, run_id))["workItems"][0]
        assert second["id"] != first["id"], "the rework opened a new item for the same step"
        for _ in range(50):
            await system.turn(120)
        assert [w["id"] for w in (await view(system, run_id))["workItems"]] == [second["id"]], (
            "the new item is protected too: the step is left for the whole run"
        )

        back = await system.presenter.control("leave", {"runId": run_id, "stepId": "finance_approval"})
        assert back["message"] == f"Finance_approval of {run_id} is back with the demo people."
        assert back["left"] == []

        async def ended() -> bool:
            return (await view(system, run_id))["run"]["state"] == "ended"

        await turn_until(system, ended, seconds=60)
        data = await view(system, run_id)
        assert (data["run"]["outcome"], data["data"]["steps"]["finance_approval"]["by"]) == (
            "issued",
            "fiona@example.com",
        )
        assert system.people.decisions == {"approve:approved": 1}, "decided by a demo person once given back"


async def test_a_run_left_to_the_presenter_keeps_every_item_from_the_demo_people(tmp_path: Path) -> None:
    async with conducted(tmp_path, agents=2) as system:
        run_id = await start(system, "new-hire-laptop", {"manager": "mira@example.com"})
        other = await start(system, "new-hire-laptop", {"manager": "mira@example.com"})
        for cued in (run_id, other):  # worked plainly: no habit of the agents or people gets in the way
            system.director.cue_run(Cued(cued, "test"))
        answer = await system.presenter.control("leave", {"runId": run_id})
        assert answer["message"] == f"Left to you: run {run_id}. Demo people will not decide it."

        async def both_waiting() -> bool:
            opened = [open_steps(await view(system, r)) for r in (run_id, other)]
            return opened == [["manager_confirm"], ["manager_confirm"]]

        await turn_until(system, both_waiting, seconds=60)

        async def other_moved_on() -> bool:
            return "manager_confirm" not in open_steps(await view(system, other))

        await turn_until(system, other_moved_on, seconds=60)
        for _ in range(60):
            await system.turn(120)
        assert open_steps(await view(system, run_id)) == ["manager_confirm"], "only the other run moved on"
