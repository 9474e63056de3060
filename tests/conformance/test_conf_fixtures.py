"""The conformance fixtures (conformance/README.md): a conforming server publishes every core fixture and
each profile fixture it offers, and runs each to a finish through the tools alone.

An independent driver works each run the way agents and people would: agent steps are claimed and
submitted, work items decided (approve, complete), and when only timers remain the clock moves a day.
Every answer on the way passes the harness checks (schemas, no token leaks).
"""

from __future__ import annotations

from typing import Any

import pytest
from ruamel.yaml import YAML

from engine.identity import Identity, person
from tests.conformance.conformance_support import AGENT, FIN1, FIN2, OPS, Server, states
from tests.support.schemas import SPEC

pytestmark = pytest.mark.both_stores

FIXTURES = SPEC / "conformance" / "fixtures"
PROFILE_FIXTURES = {"major-incident": "parallel-1", "vendor-check": "check-1"}
CORE = sorted(p.name for p in FIXTURES.iterdir() if p.name not in PROFILE_FIXTURES)


def _frontmatter(name: str) -> dict[str, Any]:
    text = (FIXTURES / name / "PROCESS.md").read_text()
    return YAML(typ="safe", pure=True).load(text.split("---\n")[1])


def _roles(front: dict[str, Any]) -> dict[str, str]:
    roles = {s["person"] for s in front["steps"] if "person" in s and "." not in s["person"]}
    return {role: "g_finance" for role in sorted(roles - {"initiator"})}


def _value(declared: Any) -> Any:
    spec = {"type": declared} if isinstance(declared, str) else declared
    if spec.get("one_of"):
        return spec["one_of"][0]
    kind = spec["type"]
    if kind == "list":
        return [_value(spec["items"])] if "items" in spec else []
    return {
        "string": "text",
        "number": 12.5,
        "boolean": True,
        "date": "2026-10-07",
        "datetime": "2026-10-08T09:00:00Z",
        "object": {"k": "v"},
        "person": FIN2.id,
    }[kind]


def _values(fields: dict[str, Any] | None) -> dict[str, Any]:
    return {name: _value(declared) for name, declared in (fields or {}).items()}


async def _evidence(server: Server, kinds: list[str] | None, who: Identity) -> list[dict[str, str]]:
    items = []
    for kind in kinds or []:
        if kind == "file":
            items.append({"kind": "file", "ref": (await server.upload(b"fixture evidence", who=who))["id"]})
        else:
            items.append({"kind": "link", "ref": "DOC-1"})
    return items


def _decider(assigned: dict[str, str]) -> Identity:
    if "person" in assigned:
        return person(assigned["person"])
    return FIN1 if assigned["group"] == "g_finance" else OPS


async def _work_once(server: Server, view: dict[str, Any]) -> bool:
    run_id = view["run"]["id"]
    for step in view["steps"]:
        if step["kind"] == "agent" and step["state"] == "ready":
            claimed = await server.claim(run_id, step["id"])
            need = claimed["step"]
            route = {"next": need["next"][0]["to"], "reason": "First route."} if need["next"] else {}
            await server.ok(
                AGENT,
                "submit",
                token=claimed["token"],
                output=_values(need["output"]),
                evidence=await _evidence(server, need["evidence"], AGENT),
                summary=f"Did {step['id']}.",
                **route,
            )
            return True
    for item in view["workItems"]:
        who = _decider(item["assignedTo"])
        if item["kind"] == "approve":
            await server.decide(who, view, item["stepId"], "approved")
        else:
            route = {"next": item["next"][0]["to"], "reason": "First route."} if item["next"] else {}
            await server.decide(
                who,
                view,
                item["stepId"],
                "completed",
                output=_values(item["output"]),
                evidence=await _evidence(server, item["evidence"], who),
                **route,
            )
        return True
    return False


async def _run_to_the_end(server: Server, name: str) -> dict[str, Any]:
    front = _frontmatter(name)
    await server.publish((FIXTURES / name / "PROCESS.md").read_text(), _roles(front))
    view = await server.start(name, _values(front.get("inputs")), who=FIN1)
    for _ in range(80):
        view = await server.view(view["run"]["id"])
        if view["run"]["state"] in ("ended", "cancelled"):
            return view
        if not await _work_once(server, view):
            await server.advance(days=1)
    raise AssertionError(f"{name} did not end: {states(view)}")


@pytest.mark.parametrize("name", [*CORE, "major-incident"])
async def test_each_fixture_runs_to_a_finish(server: Server, name: str) -> None:
    if name in PROFILE_FIXTURES:
        assert PROFILE_FIXTURES[name] in (await server.ok(AGENT, "describe"))["profiles"]
    finishes = {s["finish"] for s in _frontmatter(name)["steps"] if "finish" in s}
    view = await _run_to_the_end(server, name)
    assert view["run"]["state"] == "ended"
    assert view["run"]["outcome"] in finishes, view["run"]
    assert view["run"]["ended"]["by"] == "server" and view["run"]["ended"]["note"] is None
    assert view["workItems"] == []
    assert not {s["state"] for s in view["steps"]} & {"ready", "claimed", "waiting"}


async def test_the_check_fixture_publishes_exactly_when_check_1_is_offered(server: Server) -> None:
    """Spec §8: a server refuses at publication a process whose keys need a profile it lacks."""
    offered = "check-1" in (await server.ok(AGENT, "describe"))["profiles"]
    front = _frontmatter("vendor-check")
    result = await server.engine.publish(FIXTURES / "vendor-check", _roles(front))
    assert result.ok is offered, result.issues
    if not offered:
        assert any("check" in issue for issue in result.issues), result.issues
