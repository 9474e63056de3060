"""The check profile over the MCP endpoint, with the OpenAI-compatible evaluator asking a local
chat-completions stub: every verdict path, and `apc serve` reading the `[check]` table."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route

from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator.openai import OpenAIEvaluator
from engine.http.app import RunningServer, start_server
from engine.http.serve import ServeOptions, serve
from tests.engine.evaluator.evaluator_support import Stub, completion
from tests.engine.http.http_support import (
    AGENT,
    AGENT_TOKEN,
    BIND,
    MIRA,
    MIRA_TOKEN,
    OPS,
    OPS_TOKEN,
    err,
    make_org,
    ok,
    rid,
)
from tests.support.mcp import McpCaller
from tests.support.ports import free_port

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "agentprocess" / "conformance" / "fixtures"
YES_NO = "The cleared verdict matches what the attached report says."
CHOICE = "What does the summary do?"
RUBRIC = "How complete is the screening?"


def yes(p: float) -> bytes:
    """A yes/no reply whose first-token alternatives make the yes share exactly `p` (1, 0.5 or 0)."""
    top = {1.0: [("Yes", 0.0)], 0.5: [("Yes", math.log(0.5)), ("No", math.log(0.5))], 0.0: [("No", 0.0)]}[p]
    return completion(top[0][0], [(top[0][0], top[0][1], top)])


def word(text: str, confidence: float = 1.0) -> bytes:
    """A choice name or level number as one token with the given probability."""
    return completion(text, [(text, math.log(confidence), [])])


PASS = {YES_NO: yes(1.0), CHOICE: word("states"), RUBRIC: word("2")}


@dataclass
class Model:
    """What the stub answers per question; `down` answers 500 to every request while set."""

    replies: dict[str, bytes] = field(default_factory=lambda: dict(PASS))
    down: bool = False

    def respond(self, body: dict[str, Any]) -> tuple[int, bytes]:
        if self.down:
            return 503, b'{"error": "overloaded"}'
        question = body["messages"][1]["content"].split("\n\nQuestion: ", 1)[1].split("\n\n", 1)[0]
        return 200, self.replies[question]


@pytest.fixture
async def stub() -> AsyncIterator[Stub]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    stub = Stub(url=f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
    app = Starlette(routes=[Route("/v1/chat/completions", stub.endpoint, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield stub
    finally:
        stub.release.set()
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
def model(stub: Stub) -> Model:
    answers = Model()
    stub.respond = answers.respond
    return answers


@pytest.fixture
async def checking_engine(tmp_path: Path, stub: Stub, model: Model) -> AsyncIterator[Engine]:
    """An engine whose evaluator is the OpenAI-compatible one, asking the stub; vendor-check published."""
    evaluator = OpenAIEvaluator(stub.url, "small-judge", "sk-test", 5)
    engine = await Engine.open(tmp_path / "data", make_org(), clock=ManualClock(), evaluator=evaluator)
    try:
        published = await engine.publish(FIXTURES / "vendor-check", BIND)
        assert published.ok, published.issues
        yield engine
    finally:
        await engine.close()
        await evaluator.aclose()


@pytest.fixture
async def running(checking_engine: Engine) -> AsyncIterator[RunningServer]:
    server = await start_server(checking_engine, port=0)
    try:
        yield server
    finally:
        await server.stop()


class Session:
    """The agent, Mira and the operator, each with their own MCP client."""

    def __init__(self, url: str) -> None:
        self.clients = {who: McpCaller(url, token) for who, token in
                        ((AGENT, AGENT_TOKEN), (MIRA, MIRA_TOKEN), (OPS, OPS_TOKEN))}  # fmt: skip

    async def call(self, who: str, tool: str, **arguments: Any) -> dict[str, Any]:
        return await self.clients[who].call(tool, arguments)

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.aclose()

    async def screening(self) -> tuple[str, str, dict[str, Any]]:
        """A vendor-check run, its step claimed, a report uploaded: (run id, token, submit arguments)."""
        started = ok(
            await self.call(MIRA, "start_run", process="vendor-check",
                            inputs={"vendorName": "Acme", "amount": 48000}, requestId=rid()),
            "start_run",
        )  # fmt: skip
        run_id = started["run"]["id"]
        claimed = ok(
            await self.call(AGENT, "claim", runId=run_id, stepId="check_vendor", requestId=rid()), "claim"
        )
        uploaded = ok(
            await self.call(AGENT, "upload", fileName="report.pdf", contentType="application/pdf",
                            contentBase64=base64.b64encode(b"no hits").decode(), requestId=rid()),
            "upload",
        )  # fmt: skip
        args = {
            "token": claimed["token"],
            "output": {"cleared": True, "summary": "No hits on the OFAC or EU lists."},
            "evidence": [{"kind": "file", "ref": uploaded["id"]}],
            "summary": "Searched both lists by legal name. No hits.",
            "next": "approve",
            "reason": "The vendor is cleared.",
        }
        return run_id, claimed["token"], args


@pytest.fixture
async def session(running: RunningServer) -> AsyncIterator[Session]:
    s = Session(running.url)
    try:
        yield s
    finally:
        await s.aclose()


def rows(check: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(q["kind"], q["answer"], q.get("confidence"), q["result"]) for q in check["questions"]]


async def test_describe_over_the_endpoint_offers_check_1(session: Session) -> None:
    data = ok(await session.call(AGENT, "describe"), "describe")
    assert data["profiles"] == ["parallel-1", "check-1"]
    assert {k: v for k, v in data["limits"].items() if k.startswith("check")} == {
        "checkPass": 0.9,
        "checkFail": None,
        "checkConfidence": 0.8,
        "checkStateBytes": 65536,
    }


async def test_a_passing_check_over_the_endpoint_then_approval_onboards(
    session: Session, stub: Stub, model: Model
) -> None:
    run_id, _token, args = await session.screening()
    view = ok(await session.call(AGENT, "submit", **args, requestId=rid()), "submit")
    check = view["data"]["steps"]["check_vendor"]["check"]
    assert (check["verdict"], check["model"], check["advisory"]) == ("pass", "small-judge", False)
    assert rows(check) == [
        ("yes_no", 1.0, None, "pass"),
        ("choice", "states", 1.0, "pass"),
        ("rubric", 2, 1.0, "pass"),
    ]
    assert len(stub.received) == 3
    for headers, body in stub.received:
        assert headers["authorization"] == "Bearer sk-test"
        assert body["model"] == "small-judge"
        assert "sig=" not in json.dumps(body)
    [approval] = view["workItems"]
    decided = ok(
        await session.call(MIRA, "decide", **{**approval["decide"]["arguments"], "requestId": rid()},
                           decision="approved"),
        "decide",
    )  # fmt: skip
    assert (decided["run"]["state"], decided["run"]["outcome"], decided["run"]["id"]) == (
        "ended",
        "onboarded",
        run_id,
    )


async def test_a_failing_check_comes_back_to_the_agent_and_the_fix_passes(
    session: Session, model: Model
) -> None:
    _run_id, _token, args = await session.screening()
    model.replies = {YES_NO: yes(0.0), CHOICE: word("hedges", 0.9), RUBRIC: word("1", 0.9)}
    err(
        await session.call(AGENT, "submit", **args, requestId=rid()),
        "not_accepted",
        [
            f"check: {YES_NO} → no (0)",
            f"check: {CHOICE} → hedges (0.9)",
            f"check: {RUBRIC} → level 1: One list is covered. (0.9)",
        ],
    )
    model.replies = dict(PASS)
    view = ok(await session.call(AGENT, "submit", **args, requestId=rid()), "submit")
    assert view["data"]["steps"]["check_vendor"]["check"]["verdict"] == "pass"


async def test_an_unsure_check_goes_to_the_operator_who_completes_with_the_candidate(
    session: Session, model: Model
) -> None:
    run_id, _token, args = await session.screening()
    model.replies[YES_NO] = yes(0.5)
    view = ok(await session.call(AGENT, "submit", **args, requestId=rid()), "submit")
    [item] = view["workItems"]
    assert (item["assignedTo"], item["escalation"]["note"]) == (
        {"group": "operators"},
        f"check: {YES_NO} → no (0.5)",
    )
    assert rows(item["escalation"]["check"])[0] == ("yes_no", 0.5, None, "unsure")
    queue = ok(await session.call(OPS, "get_work"), "get_work")
    [entry] = queue["items"]
    assert entry["workItem"]["escalation"]["candidate"]["output"] == args["output"]
    done = ok(
        await session.call(OPS, "decide", **{**entry["workItem"]["decide"]["arguments"], "requestId": rid()},
                           decision="completed"),
        "decide",
    )  # fmt: skip
    record = done["data"]["steps"]["check_vendor"]
    assert (record["output"], record["by"], record["check"]["verdict"]) == (args["output"], OPS, "unsure")
    assert [(s["id"], s["state"]) for s in done["steps"]][:2] == [
        ("check_vendor", "done"),
        ("approve", "waiting"),
    ]
    assert done["run"]["id"] == run_id


@pytest.mark.parametrize("decision", ["returned", "own output", "failed"])
async def test_the_operator_returns_completes_with_own_output_or_fails_an_unsure_step(
    session: Session, model: Model, decision: str
) -> None:
    run_id, _token, args = await session.screening()
    model.replies[RUBRIC] = word("2", 0.5)
    view = ok(await session.call(AGENT, "submit", **args, requestId=rid()), "submit")
    [item] = view["workItems"]
    assert (
        item["escalation"]["note"]
        == f"check: {RUBRIC} → level 2: Both lists are covered with the search terms stated. (0.5)"
    )
    call = {**item["decide"]["arguments"], "requestId": rid()}
    if decision == "returned":
        back = ok(
            await session.call(OPS, "decide", **call, decision="returned", note="State the search terms."),
            "decide",
        )
        assert back["steps"][0] == {"id": "check_vendor", "kind": "agent", "state": "ready"}
        work = ok(await session.call(AGENT, "get_work"), "get_work")
        [ready] = [i for i in work["items"] if i["runId"] == run_id]
        assert ready["handoff"]["returned"]["note"] == "State the search terms."
        assert ready["handoff"]["issues"] == [item["escalation"]["note"]]
        assert ready["handoff"]["check"] == item["escalation"]["check"]
    elif decision == "own output":
        own = {"cleared": False, "summary": "The report misses the EU list."}
        done = ok(
            await session.call(OPS, "decide", **call, decision="completed", output=own,
                               evidence=args["evidence"], next="decline", reason="Not screened against the EU list."),
            "decide",
        )  # fmt: skip
        assert (done["run"]["outcome"], done["data"]["steps"]["check_vendor"]["output"]) == ("declined", own)
    else:
        failed = ok(
            await session.call(OPS, "decide", **call, decision="failed", note="Vendor is a shell company."),
            "decide",
        )
        assert (failed["run"]["outcome"], failed["run"]["ended"]["note"]) == (
            "failed",
            "Vendor is a shell company.",
        )


ADVISED = """---
name: advised
description: A note with an advisory check.
inputs:
  ticket: string
steps:
  - id: work
    agent: Answer the ticket.
    output: { note: string }
    advisory: true
    check:
      - ask: The note answers the ticket.
      - ask: How complete is the note?
        levels: [Nothing., Part., All.]
        pass: 2
  - id: done
    finish: finished
---

Tickets.
"""


async def test_an_advisory_check_over_the_endpoint_records_the_verdict_and_never_blocks(
    tmp_path: Path, checking_engine: Engine, session: Session, model: Model
) -> None:
    folder = tmp_path / "advised"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(ADVISED)
    model.replies = {"The note answers the ticket.": yes(0.0), "How complete is the note?": word("1", 0.9)}
    assert (await checking_engine.publish(folder, {})).ok
    started = ok(
        await session.call(AGENT, "start_run", process="advised", inputs={"ticket": "T"}, requestId=rid()),
        "start_run",
    )
    run_id = started["run"]["id"]
    claimed = ok(await session.call(AGENT, "claim", runId=run_id, stepId="work", requestId=rid()), "claim")
    view = ok(
        await session.call(AGENT, "submit", token=claimed["token"], output={"note": "See FAQ."}, summary="Answered.",
                           requestId=rid()),
        "submit",
    )  # fmt: skip
    check = view["data"]["steps"]["work"]["check"]
    assert (view["run"]["outcome"], check["verdict"], check["advisory"]) == ("finished", "fail", True)
    assert rows(check) == [("yes_no", 0.0, None, "fail"), ("rubric", 1, 0.9, "fail")]


async def test_an_evaluator_that_is_down_gives_retry_and_the_same_request_succeeds_later(
    session: Session, stub: Stub, model: Model
) -> None:
    run_id, _token, args = await session.screening()
    model.down = True
    request_id = rid()
    failed = err(await session.call(AGENT, "submit", **args, requestId=request_id), "retry")
    assert failed["message"] == "the evaluator did not answer; submit again with the same requestId"
    assert len(stub.received) == 6
    still = ok(await session.call(OPS, "get_run", runId=run_id), "get_run")
    assert still["steps"][0] == {"id": "check_vendor", "kind": "agent", "state": "claimed"}
    model.down = False
    view = ok(await session.call(AGENT, "submit", **args, requestId=request_id), "submit")
    assert view["data"]["steps"]["check_vendor"]["check"]["verdict"] == "pass"


ORG = f"""
[[groups]]
id = "g_finance"
members = ["{MIRA}"]

[[agents]]
id = "{AGENT}"
token = "{AGENT_TOKEN}"

[[processes]]
path = "{FIXTURES / "vendor-check"}"
bind = {{ finance-approver = "g_finance" }}

[check]
evaluator = "openai"
base_url = "{{url}}"
model = "small-judge"
api_key_env = "APC_TEST_JUDGE_KEY"
timeout_seconds = 5
checkless = 1
"""


async def test_apc_serve_reads_the_check_table_and_offers_check_1(
    tmp_path: Path, stub: Stub, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("APC_TEST_JUDGE_KEY", "sk-serve")
    config = tmp_path / "org.toml"
    config.write_text(ORG.replace("{url}", stub.url).replace("checkless = 1\n", ""))
    options = ServeOptions(config=config, data=tmp_path / "data", port=free_port())
    stop = asyncio.Event()
    ready: asyncio.Queue[RunningServer] = asyncio.Queue()
    with caplog.at_level(logging.INFO, logger="apc.serve"):
        task = asyncio.create_task(serve(options, stop=stop, on_ready=ready.put_nowait))
        server = await ready.get()
        async with McpCaller(server.url, AGENT_TOKEN) as client:
            data = ok(await client.call("describe"), "describe")
            listed = ok(await client.call("list_processes"), "list_processes")
        stop.set()
        assert await task == 0
    assert data["profiles"] == ["parallel-1", "check-1"]
    assert [i["name"] for i in listed["items"]] == ["vendor-check"]
    assert "offering check-1: checks answered by small-judge" in [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("sk-serve", "line 20: check.checkless: unknown key"),
        (None, "check.api_key_env: environment variable APC_TEST_JUDGE_KEY is not set"),
    ],
)
async def test_apc_serve_refuses_a_check_table_it_cannot_use(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    key: str | None,
    message: str,
) -> None:
    text = ORG.replace("{url}", "http://127.0.0.1:9/v1")
    if key is None:
        monkeypatch.delenv("APC_TEST_JUDGE_KEY", raising=False)
        text = text.replace("checkless = 1\n", "")
    else:
        monkeypatch.setenv("APC_TEST_JUDGE_KEY", key)
    config = tmp_path / "org.toml"
    config.write_text(text)
    options = ServeOptions(config=config, data=tmp_path / "data", port=free_port())
    with caplog.at_level(logging.ERROR, logger="apc.serve"):
        status = await serve(options, stop=asyncio.Event())
    assert status == 2
    prefix = f"{config}: " if key is not None else ""
    assert [r.getMessage() for r in caplog.records] == [f"configuration error: {prefix}{message}"]
