"""Shared material for the check tests: the vendor-check fixture's questions, a scriptable fake
evaluator, and the core-2 schemas resolved by `$id`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jsonschema import Draft202012Validator
from starlette.requests import Request
from starlette.responses import Response

from engine.document.model import CheckQuestion, Field, Step
from engine.evaluator.base import Answer, CheckRequest, EvaluatorError
from engine.evaluator.verdict import Material
from tests.support.schemas import REGISTRY

BASE = "https://agentprocess.io/schemas/core-2/"
NOW = datetime(2026, 10, 6, 9, 4, 20, tzinfo=UTC)

YES_NO = CheckQuestion(
    ask="The cleared verdict matches what the attached report says.",
    kind="yes_no",
    pass_at=0.9,
    fail_below=0.5,
)
CHOICE = CheckQuestion(
    ask="What does the summary do?",
    kind="choice",
    choices=(
        ("states", "States the verdict and the lists checked."),
        ("hedges", "Avoids a verdict or qualifies it heavily."),
        ("unclear", "Cannot tell."),
    ),
    pass_choices=("states",),
    unsure_choices=("unclear",),
)
RUBRIC = CheckQuestion(
    ask="How complete is the screening?",
    kind="rubric",
    levels=(
        "Neither list is clearly covered.",
        "One list is covered.",
        "Both lists are covered with the search terms stated.",
    ),
    pass_level=2,
    confidence=0.8,
)
INSTRUCTIONS = (
    "Check the vendor against the OFAC and EU sanctions lists.\n"
    "Attach the screening report. Choose approve when the vendor is\n"
    "cleared and decline when it is not.\n"
)


def vendor_step(*questions: CheckQuestion, advisory: bool = False) -> Step:
    return Step(
        id="check_vendor",
        kind="agent",
        value=INSTRUCTIONS,
        output=(
            Field("cleared", "boolean", declared="boolean"),
            Field("summary", "string", declared="string"),
        ),
        evidence=("file",),
        check=questions or (YES_NO, CHOICE, RUBRIC),
        advisory=advisory,
    )


def material(run_data: dict[str, Any] | None = None) -> Material:
    return Material(
        process="vendor-check",
        body="# Vendor check\n\nStart this when procurement has a new supplier.\n",
        run_data=run_data
        if run_data is not None
        else {"inputs": {"vendorName": "Acme", "amount": 48000}, "steps": {}},
        output={"cleared": True, "summary": "No matches on OFAC or EU lists."},
        summary="Searched both lists by legal name. No hits. Report attached.",
        evidence=({"kind": "file", "ref": "f_91a"},),
    )


@dataclass
class FakeEvaluator:
    """Answers by question text; `failures[ask]` errors come first, one per call."""

    answers: dict[str, Answer]
    failures: dict[str, int] = field(default_factory=dict)
    model: str = "fake-evaluator-1"
    requests: list[CheckRequest] = field(default_factory=list)

    async def answer(self, request: CheckRequest) -> Answer:
        self.requests.append(request)
        await asyncio.sleep(0)
        ask = request.question.ask
        if self.failures.get(ask, 0) > 0:
            self.failures[ask] -= 1
            raise EvaluatorError("evaluator unreachable")
        return self.answers[ask]

    async def aclose(self) -> None:
        """Nothing to release."""

    def calls(self, ask: str) -> int:
        return sum(1 for r in self.requests if r.question.ask == ask)


def validator(ref: str) -> Draft202012Validator:
    """A validator for a schema or a part of one, relative to core-2: `work-item.json#/properties/...`."""
    return Draft202012Validator({"$ref": BASE + ref}, registry=REGISTRY)


def errors(ref: str, instance: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(ref).iter_errors(instance)]


def assert_valid_verdict(wire: dict[str, Any]) -> None:
    assert errors("check-verdict.json", wire) == []


def completion(content: str | None, tokens: list[tuple[str, float, list[tuple[str, float]]]]) -> bytes:
    """A chat-completions reply as OpenAI writes it, with `logprobs.content` per token."""
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1791277460,
            "model": "small-judge",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": {
                        "content": [
                            {
                                "token": token,
                                "logprob": logprob,
                                "bytes": list(token.encode()),
                                "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in top],
                            }
                            for token, logprob, top in tokens
                        ]
                    },
                    "finish_reason": "length",
                }
            ],
            "usage": {
                "prompt_tokens": 310,
                "completion_tokens": len(tokens),
                "total_tokens": 310 + len(tokens),
            },
        }
    ).encode()


Reply = tuple[int, bytes]


@dataclass
class Stub:
    url: str
    respond: Callable[[dict[str, Any]], Reply] = lambda body: (500, b"{}")
    """How the stub answers a request body; tests set it."""
    hang: bool = False
    """When set, a request waits until the test ends: a server that never answers."""
    received: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def endpoint(self, request: Request) -> Response:
        body = await request.json()
        self.received.append((dict(request.headers), body))
        if self.hang:
            await self.release.wait()
        status, content = self.respond(body)
        return Response(content, status_code=status, media_type="application/json")
