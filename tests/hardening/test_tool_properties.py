"""Property test of the fourteen tools: whatever the caller and arguments, the answer is an envelope that
its schema accepts (the tool's result schema when ok, tool-error.json when not), its JSON text equals
its structured content, and it is never `retry` (nothing in these calls is transient, so a `retry`
would be an internal error: the very thing forged cursors and unreadable arguments used to cause).

Each example walks a run the way agents and people do (start, claim, renew, upload, submit, escalate,
decide, send an event, read, cancel), each call perhaps spoiled: a key dropped, a value replaced by
arbitrary JSON (huge or fractional numbers, NaN, infinities, lone surrogates, deep nesting), an id
forged, another caller; then a few calls of arbitrary tools with arbitrary arguments. What an example
draws never depends on what earlier calls answered (Hypothesis replays examples), only the ids filled
in do.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.clock import ManualClock
from engine.core import Engine
from engine.http.endpoint import result_of
from engine.identity import Identity, agent, person
from engine.ids import IdSource
from engine.org import OrgConfig
from tests.hardening.serve_support import AGENTS, OPERATOR, OUTSIDER, REVIEWERS, write_config
from tests.support.envelopes import ERROR_VALIDATOR, RESULT_VALIDATORS

AGENT, REVIEWER = agent(next(iter(AGENTS))), person(next(iter(REVIEWERS)))
OPS, NOBODY = person(OPERATOR[0], operator=True), person(OUTSIDER[0])
IDENTITIES = [AGENT, agent(list(AGENTS)[1]), REVIEWER, NOBODY, OPS, agent("a_unknown")]

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**53 - 2, max_value=2**70)
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["\ud800", "x\udfff", "", " ", "r_", "w_", "crash-flow", "go", "draft"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

WALK = [
    ("start_run", AGENT),
    ("get_work", AGENT),
    ("claim", AGENT),
    ("renew", AGENT),
    ("upload", AGENT),
    ("submit", AGENT),
    ("get_work", AGENT),
    ("claim", AGENT),
    ("escalate", AGENT),
    ("get_work", REVIEWER),
    ("decide", REVIEWER),
    ("get_work", OPS),
    ("decide", OPS),
    ("send_event", OPS),
    ("get_run", NOBODY),
    ("list_runs", REVIEWER),
    ("list_processes", AGENT),
    ("describe", AGENT),
    ("cancel", OPS),
]


@dataclass(frozen=True)
class Spoil:
    """How one call of the walk is spoiled (`kind` none most of the time)."""

    kind: str
    index: int
    junk: Any
    who: Identity


SPOILS = st.builds(
    Spoil,
    st.sampled_from(["none", "none", "none", "none", "drop", "junk", "extra", "forge", "caller"]),
    st.integers(0, 20),
    JSON,
    st.sampled_from(IDENTITIES),
)


@dataclass
class State:
    """What the walk learnt from the engine's answers so far."""

    runs: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    offered: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cursors: list[str] = field(default_factory=list)

    def learn(self, tool: str, envelope: dict[str, Any]) -> None:
        if not envelope["ok"]:
            return
        data = envelope["data"]
        if tool == "start_run":
            self.runs.append(data["run"]["id"])
        if tool in ("claim", "renew"):
            self.tokens.append(data["token"])
        if tool == "upload":
            self.files.append(data["id"])
        if tool == "get_work":
            for item in data["items"]:
                offer = item.get("claim") or item["workItem"]["decide"]
                self.offered.setdefault(offer["tool"], []).append(
                    {**offer["arguments"], "decisions": offer.get("decisions", [])}
                )
        if isinstance(data, dict) and data.get("nextCursor"):
            self.cursors.append(data["nextCursor"])

    def last(self, pool: list[Any], default: Any) -> Any:
        return pool[-1] if pool else default

    def fitting(self, tool: str) -> dict[str, Any]:
        """The call an agent or person would make now."""
        run = self.last(self.runs, "r_none")
        token = self.last(self.tokens, "no-token")
        fresh = str(uuid.uuid4())
        if tool in ("claim", "decide"):
            offer = dict(self.last(self.offered.get(tool, []), {"runId": run, "stepId": "draft"}))
            decisions = offer.pop("decisions", [])
            offer["requestId"] = fresh
            if tool == "decide":
                offer.update(decision=(decisions or ["approved"])[0], note="Looked at it.")
            return offer
        calls: dict[str, dict[str, Any]] = {
            "start_run": {"process": "crash-flow", "inputs": {"ticket": fresh[:8]}, "requestId": fresh},
            "get_work": {"limit": 5},
            "renew": {"token": token, "progress": "half", "requestId": fresh},
            "upload": {
                "fileName": "r.txt",
                "contentType": "text/plain",
                "contentBase64": "eA==",
                "requestId": fresh,
            },
            "submit": {
                "token": token,
                "output": {"note": "done"},
                "summary": "Did it.",
                "evidence": [{"kind": "file", "ref": self.last(self.files, "f_none")}],
                "requestId": fresh,
            },
            "escalate": {"token": token, "note": "Stuck.", "requestId": fresh},
            "send_event": {"runId": run, "name": "go", "data": {"ref": fresh[:4]}, "requestId": fresh},
            "get_run": {"runId": run},
            "list_runs": {"limit": 2, **({"cursor": self.cursors[-1]} if self.cursors else {})},
            "list_processes": {},
            "describe": {},
            "cancel": {"runId": self.runs[0] if self.runs else run, "reason": "Enough.", "requestId": fresh},
        }
        return calls[tool]


def spoiled(arguments: dict[str, Any], spoil: Spoil) -> dict[str, Any]:
    out = dict(arguments)
    keys = sorted(out)
    key = keys[spoil.index % len(keys)] if keys else "x"
    if spoil.kind == "drop":
        out.pop(key, None)
    elif spoil.kind == "junk":
        out[key] = spoil.junk
    elif spoil.kind == "extra":
        out[f"extra{spoil.index}"] = spoil.junk
    elif spoil.kind == "forge" and isinstance(out.get(key), str):
        out[key] = out[key] + "x"
    return out


def schema_valid(tool: str, envelope: dict[str, Any]) -> list[str]:
    if envelope.get("ok") is True and set(envelope) == {"ok", "data"}:
        return [e.message for e in RESULT_VALIDATORS[tool].iter_errors(envelope["data"])]
    if envelope.get("ok") is False and set(envelope) == {"ok", "error"}:
        return [e.message for e in ERROR_VALIDATOR.iter_errors(envelope["error"])]
    return [f"not an envelope: {envelope}"]


def counted_ids() -> IdSource:
    """Engine ids from a counter, so a derandomized run makes the same calls every time."""
    numbers = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(numbers):06d}"


def check_calls(tmp_path: Path, examples: int, derandomize: bool) -> None:
    org = OrgConfig.load(write_config(tmp_path))
    clock = ManualClock()
    answered: set[tuple[str, bool]] = set()
    with asyncio.Runner() as runner:
        engine = runner.run(Engine.open(tmp_path / "data", org, clock=clock, ids=counted_ids()))
        try:
            assert all(r.ok for r in runner.run(engine.publish_config_processes()))

            def called(who: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                envelope = runner.run(engine.call(who, tool, arguments))
                result = result_of(envelope)
                [content] = result.content
                assert isinstance(content, types.TextContent)
                assert json.loads(content.text) == result.structured_content == envelope
                assert schema_valid(tool, envelope) == []
                assert envelope.get("error", {}).get("code") != "retry", (tool, arguments, envelope)
                answered.add((tool, bool(envelope["ok"])))
                return envelope

            @settings(max_examples=examples, derandomize=derandomize)
            @given(
                st.lists(SPOILS, min_size=len(WALK), max_size=len(WALK)),
                st.lists(
                    st.tuples(st.sampled_from(IDENTITIES), st.sampled_from(engine.tools), JSON), max_size=4
                ),
                st.integers(0, 240),
            )
            def answers_are_envelopes(
                spoils: list[Spoil], stray: list[tuple[Identity, str, Any]], minutes: int
            ) -> None:
                state = State()
                for (tool, who), spoil in zip(WALK, spoils, strict=True):
                    caller = spoil.who if spoil.kind == "caller" else who
                    state.learn(tool, called(caller, tool, spoiled(state.fitting(tool), spoil)))
                for who, tool, arguments in stray:
                    called(who, tool, arguments if isinstance(arguments, dict) else {"value": arguments})
                clock.advance(minutes=minutes)

            answers_are_envelopes()
        finally:
            runner.run(engine.close())
    assert {tool for tool, ok in answered if ok} == set(engine.tools)
    assert {tool for tool, ok in answered if not ok} == set(engine.tools)


def test_every_answer_is_a_schema_valid_envelope_whose_text_is_its_content(tmp_path: Path) -> None:
    check_calls(tmp_path, examples=100, derandomize=True)


@pytest.mark.soak
def test_many_answers_are_schema_valid_envelopes(tmp_path: Path) -> None:
    check_calls(tmp_path, examples=1500, derandomize=False)
