"""The OpenAI-compatible evaluator, against a stub on a real socket and, for the many malformed
replies, through `httpx.MockTransport` (the same parsing path, without a server per case)."""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.document.model import CheckQuestion
from engine.evaluator.base import CheckRequest, Choice, EvaluatorError, Level, YesNo
from engine.evaluator.config import CheckLimits, build_evaluator, parse_check_config
from engine.evaluator.openai import MAX_REPLY_BYTES, OpenAIEvaluator
from engine.evaluator.prompt import SYSTEM
from engine.evaluator.verdict import issue_lines, run_check
from tests.engine.evaluator.evaluator_support import (
    CHOICE,
    NOW,
    RUBRIC,
    YES_NO,
    Stub,
    assert_valid_verdict,
    completion,
    material,
    vendor_step,
)

LN = math.log


def request(question: CheckQuestion) -> CheckRequest:
    given = material()
    return CheckRequest(
        "vendor-check", "check_vendor", "Check the vendor.", given.body, given.run_data, given.output,
        given.summary, given.evidence, question,
    )  # fmt: skip


def yes_no_reply(top: list[tuple[str, float]]) -> bytes:
    return completion(top[0][0], [(top[0][0], top[0][1], top)])


async def test_yes_no_is_the_yes_share_of_the_top_first_tokens(stub: Stub) -> None:
    top = [("Yes", LN(0.6)), ("No", LN(0.2)), (" yes", LN(0.1)), ("\u2581no", LN(0.05)), ("Maybe", LN(0.05))]
    stub.respond = lambda body: (200, yes_no_reply(top))
    evaluator = OpenAIEvaluator(stub.url, "small-judge", "sk-test", 5)
    try:
        answer = await evaluator.answer(request(YES_NO))
    finally:
        await evaluator.aclose()
    assert isinstance(answer, YesNo)
    assert answer.p == pytest.approx(0.7 / 0.95, abs=1e-12)
    [(headers, body)] = stub.received
    assert headers["authorization"] == "Bearer sk-test"
    assert {k: v for k, v in body.items() if k != "messages"} == {
        "model": "small-judge",
        "temperature": 0,
        "max_tokens": 1,
        "logprobs": True,
        "top_logprobs": 5,
    }
    system, user = body["messages"]
    assert system == {"role": "system", "content": SYSTEM}
    assert user["role"] == "user"
    assert user["content"].endswith(
        f"\n</material>\n\nQuestion: {YES_NO.ask}\n\nAnswer with one word: yes or no."
    )


@pytest.mark.parametrize(
    ("top", "p"),
    [
        ([("yes", 0.0)], 1.0),
        ([("no", 0.0), ("yes", LN(1e-9))], 1e-9 / (1 + 1e-9)),
        ([("\u0120YES", LN(0.3)), ("no", LN(0.3)), ("maybe", LN(0.4))], 0.5),
        ([("no", LN(0.5)), ("yes", 1e-9)], 1 / 1.5),
    ],
)
async def test_yes_no_maths(top: list[tuple[str, float]], p: float) -> None:
    answer = await answer_via_mock(request(YES_NO), 200, yes_no_reply(top))
    assert isinstance(answer, YesNo)
    assert answer.p == pytest.approx(p, abs=1e-12)


async def test_choice_is_one_name_with_the_probability_of_its_tokens(stub: Stub) -> None:
    stub.respond = lambda body: (200, completion("hedges", [("hed", -0.05, []), ("ges", -0.01, [])]))
    evaluator = OpenAIEvaluator(stub.url + "/", "small-judge", None, 5)
    try:
        answer = await evaluator.answer(request(CHOICE))
    finally:
        await evaluator.aclose()
    assert isinstance(answer, Choice)
    assert answer.name == "hedges"
    assert answer.confidence == pytest.approx(math.exp(-0.06), abs=1e-12)
    [(headers, body)] = stub.received
    assert "authorization" not in headers
    assert (body["max_tokens"], body["logprobs"], "top_logprobs" in body) == (len("unclear") + 1, True, False)
    assert body["messages"][1]["content"].endswith(
        "\n\nQuestion: What does the summary do?\n\nPossible answers:\n"
        "- states: States the verdict and the lists checked.\n"
        "- hedges: Avoids a verdict or qualifies it heavily.\n"
        "- unclear: Cannot tell.\n"
        "Answer with exactly one answer name from this list, as written, and nothing else."
    )


async def test_rubric_is_one_level_number(stub: Stub) -> None:
    stub.respond = lambda body: (200, completion("2", [("2", LN(0.85), [])]))
    evaluator = OpenAIEvaluator(stub.url, "small-judge", None, 5)
    try:
        answer = await evaluator.answer(request(RUBRIC))
    finally:
        await evaluator.aclose()
    assert isinstance(answer, Level)
    assert answer.level == 2
    assert answer.confidence == pytest.approx(0.85, abs=1e-12)
    [(_, body)] = stub.received
    assert body["max_tokens"] == 1
    assert body["messages"][1]["content"].endswith(
        "\n\nQuestion: How complete is the screening?\n\nLevels, worst first:\n"
        "0: Neither list is clearly covered.\n"
        "1: One list is covered.\n"
        "2: Both lists are covered with the search terms stated.\n"
        "Answer with exactly one level number from 0 to 2 and nothing else."
    )


async def test_a_server_that_never_answers_times_out(stub: Stub) -> None:
    stub.hang = True
    evaluator = OpenAIEvaluator(stub.url, "small-judge", None, 0.2)
    try:
        with pytest.raises(EvaluatorError) as raised:
            await evaluator.answer(request(YES_NO))
    finally:
        await evaluator.aclose()
    assert str(raised.value) == "no answer within 0.2s"


@pytest.mark.parametrize(
    ("status", "content", "message"),
    [
        (500, b'{"error": {"message": "overloaded"}}', "HTTP 500 from the evaluator"),
        (200, b"<html>", "reply is not JSON"),
    ],
)
async def test_an_error_status_or_a_page_is_an_error(
    stub: Stub, status: int, content: bytes, message: str
) -> None:
    stub.respond = lambda body: (status, content)
    evaluator = OpenAIEvaluator(stub.url, "small-judge", None, 5)
    try:
        with pytest.raises(EvaluatorError) as raised:
            await evaluator.answer(request(YES_NO))
    finally:
        await evaluator.aclose()
    assert str(raised.value) == message


async def test_nobody_listening_is_an_error() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    evaluator = OpenAIEvaluator(f"http://127.0.0.1:{port}/v1", "small-judge", None, 5)
    try:
        with pytest.raises(EvaluatorError) as raised:
            await evaluator.answer(request(YES_NO))
    finally:
        await evaluator.aclose()
    assert str(raised.value) == "request failed: ConnectError"


async def test_build_evaluator_sends_the_key_from_the_environment(stub: Stub, tmp_path: Path) -> None:
    table = {"evaluator": "openai", "base_url": stub.url, "model": "small-judge", "api_key_env": "JUDGE_KEY"}
    evaluator = build_evaluator(
        parse_check_config(table, tmp_path / "org.toml"), env={"JUDGE_KEY": "sk-from-env"}
    )
    assert isinstance(evaluator, OpenAIEvaluator)
    stub.respond = lambda body: (200, yes_no_reply([("yes", 0.0)]))
    try:
        assert await evaluator.answer(request(YES_NO)) == YesNo(1.0)
    finally:
        await evaluator.aclose()
    assert stub.received[0][0]["authorization"] == "Bearer sk-from-env"


async def test_a_whole_check_over_the_socket(stub: Stub) -> None:
    def respond(body: dict[str, Any]) -> tuple[int, bytes]:
        question = body["messages"][1]["content"]
        if CHOICE.ask in question:
            return 200, completion("states", [("states", LN(0.97), [])])
        if RUBRIC.ask in question:
            return 200, completion("1", [("1", LN(0.9), [])])
        return 200, yes_no_reply([("yes", LN(0.55)), ("no", LN(0.45))])

    stub.respond = respond
    evaluator = OpenAIEvaluator(stub.url, "small-judge", None, 5)
    try:
        verdict = await run_check(evaluator, vendor_step(), material(), CheckLimits(), NOW)
    finally:
        await evaluator.aclose()
    wire = verdict.wire()
    assert (wire["verdict"], wire["model"], [q["result"] for q in wire["questions"]]) == (
        "unsure",
        "small-judge",
        ["unsure", "pass", "fail"],
    )
    assert wire["questions"][0]["answer"] == pytest.approx(0.55, abs=1e-12)
    assert issue_lines(verdict) == [
        "check: How complete is the screening? → level 1: One list is covered. (0.9)"
    ]
    assert len(stub.received) == 3
    assert_valid_verdict(wire)


async def answer_via_mock(req: CheckRequest, status: int, content: bytes) -> YesNo | Choice | Level:
    transport = httpx.MockTransport(lambda r: httpx.Response(status, content=content))
    evaluator = OpenAIEvaluator("http://judge.invalid/v1", "small-judge", None, 30, transport=transport)
    try:
        return await evaluator.answer(req)
    finally:
        await evaluator.aclose()


def raw(body: Any) -> bytes:
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("question", "content", "message"),
    [
        (YES_NO, raw([]), "malformed reply: 1 problem(s), first at the top"),
        (YES_NO, raw({"choices": []}), "malformed reply: 1 problem(s), first at choices"),
        (
            YES_NO,
            raw({"choices": [{"message": {"content": "yes"}}]}),
            "malformed reply: 1 problem(s), first at choices.0.logprobs",
        ),
        (
            YES_NO,
            raw({"choices": [{"message": {"content": "yes"}, "logprobs": {"content": []}}]}),
            "malformed reply: 1 problem(s), first at choices.0.logprobs.content",
        ),
        (
            YES_NO,
            raw(
                {"choices": [{"message": {}, "logprobs": {"content": [{"token": "yes", "logprob": "high"}]}}]}
            ),
            "malformed reply: 1 problem(s), first at choices.0.logprobs.content.0.logprob",
        ),
        (YES_NO, completion("yes", [("yes", 0.0, [])]), "the reply has no top log-probabilities"),
        (
            YES_NO,
            yes_no_reply([("Sure", LN(0.9)), ("Maybe", LN(0.1))]),
            "neither yes nor no is among the top answers",
        ),
        (YES_NO, yes_no_reply([("yes", 0.5)]), "log-probability 0.5 is not a log of a probability"),
        (
            CHOICE,
            completion("Hedges", [("Hedges", LN(0.9), [])]),
            "answer 'Hedges' is not one of states, hedges, unclear",
        ),
        (
            CHOICE,
            completion("hedges.", [("hedges", LN(0.9), []), (".", 0.0, [])]),
            "answer 'hedges.' is not one of states, hedges, unclear",
        ),
        (CHOICE, completion(None, [("", 0.0, [])]), "answer '' is not one of states, hedges, unclear"),
        (RUBRIC, completion("3", [("3", LN(0.9), [])]), "answer '3' is not a level from 0 to 2"),
        (RUBRIC, completion("two", [("two", LN(0.9), [])]), "answer 'two' is not a level from 0 to 2"),
        (RUBRIC, completion("\u00b2", [("\u00b2", LN(0.9), [])]), "answer '²' is not a level from 0 to 2"),
        (RUBRIC, b"not json", "reply is not JSON"),
        (RUBRIC, b" " * (MAX_REPLY_BYTES + 1), f"reply larger than {MAX_REPLY_BYTES} bytes"),
    ],
)
async def test_a_malformed_reply_is_an_evaluator_error(
    question: CheckQuestion, content: bytes, message: str
) -> None:
    with pytest.raises(EvaluatorError) as raised:
        await answer_via_mock(request(question), 200, content)
    assert str(raised.value) == message


async def test_a_transport_timeout_is_an_evaluator_error() -> None:
    def slow(r: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=r)

    evaluator = OpenAIEvaluator(
        "http://judge.invalid/v1", "small-judge", None, 7, transport=httpx.MockTransport(slow)
    )
    try:
        with pytest.raises(EvaluatorError) as raised:
            await evaluator.answer(request(YES_NO))
    finally:
        await evaluator.aclose()
    assert str(raised.value) == "no answer within 7s"
