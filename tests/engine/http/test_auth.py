"""Who may call what over the endpoint: bearer tokens, identities from tokens only, and errors as values."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from engine.core import Engine
from engine.http.app import RunningServer
from engine.tools import dispatch
from tests.engine.http.http_support import AGENT, AGENT_TOKEN, MIRA_TOKEN, OPS_TOKEN, err, ok, rid
from tests.support.mcp import McpCaller
from tests.support.rpc import ACCEPT, tool_call

CALL = tool_call("describe")


async def post(url: str, headers: dict[str, str], body: dict[str, Any] = CALL) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(url, json=body, headers={**ACCEPT, **headers})


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer not-a-token", "Bearer", f"Basic {AGENT_TOKEN}", AGENT_TOKEN, f"Bearer {AGENT_TOKEN[:-1]}"],
)
async def test_a_request_without_a_known_bearer_token_is_401(
    server: RunningServer, authorization: str | None
) -> None:
    response = await post(server.url, {} if authorization is None else {"Authorization": authorization})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        'Bearer error="invalid_token", error_description="Authentication required"'
    )
    assert response.json() == {"error": "invalid_token", "error_description": "Authentication required"}


async def test_every_method_on_mcp_needs_the_token(server: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        statuses = [
            (await client.get(server.url, headers=ACCEPT)).status_code,
            (await client.delete(server.url)).status_code,
        ]
    assert statuses == [401, 401]


async def test_the_token_decides_the_identity_not_the_arguments(server: RunningServer) -> None:
    start = {"process": "screening", "inputs": {"vendorName": "Acme"}}
    async with McpCaller(server.url, MIRA_TOKEN) as mira:
        posing = await mira.call("start_run", {**start, "requestId": rid(), "startedBy": AGENT})
        view = ok(await mira.call("start_run", {**start, "requestId": rid()}), "start_run")
    err(posing, "invalid", ["startedBy: not allowed"])
    assert view["run"]["startedBy"] == "mira@example.com"


async def start_and_claim(server: RunningServer) -> tuple[str, dict[str, Any]]:
    async with McpCaller(server.url, MIRA_TOKEN) as mira, McpCaller(server.url, AGENT_TOKEN) as agent:
        view = ok(
            await mira.call(
                "start_run", {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()}
            ),
            "start_run",
        )
        run_id = view["run"]["id"]
        claimed = ok(
            await agent.call("claim", {"runId": run_id, "stepId": "check_vendor", "requestId": rid()}),
            "claim",
        )
    return run_id, claimed


async def test_a_person_calling_claim_is_forbidden(server: RunningServer) -> None:
    async with McpCaller(server.url, MIRA_TOKEN) as mira:
        view = ok(
            await mira.call(
                "start_run", {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()}
            ),
            "start_run",
        )
        envelope = await mira.call(
            "claim", {"runId": view["run"]["id"], "stepId": "check_vendor", "requestId": rid()}
        )
    assert err(envelope, "forbidden") == {"code": "forbidden", "message": "claim is for agent identities"}


async def test_an_agent_calling_decide_is_forbidden(server: RunningServer) -> None:
    _, claimed = await start_and_claim(server)
    async with McpCaller(server.url, AGENT_TOKEN) as agent, McpCaller(server.url, OPS_TOKEN) as ops:
        ok(
            await agent.call(
                "escalate", {"token": claimed["token"], "note": "The list site is down.", "requestId": rid()}
            ),
            "escalate",
        )
        work = ok(await ops.call("get_work", {}), "get_work")
        decide = work["items"][0]["workItem"]["decide"]
        envelope = await agent.call(
            "decide",
            {**decide["arguments"], "decision": "returned", "note": "Try again.", "requestId": rid()},
        )
    assert err(envelope, "forbidden") == {"code": "forbidden", "message": "only a person decides"}


async def test_a_forged_claim_token_is_invalid(server: RunningServer) -> None:
    await start_and_claim(server)
    forged = "eyJhbGciOiJIUzI1NiJ9.eyJydW4iOiJyXzEifQ.c2lnbmF0dXJl"
    async with McpCaller(server.url, AGENT_TOKEN) as agent:
        envelope = await agent.call(
            "submit", {"token": forged, "output": {"cleared": True}, "summary": "Done.", "requestId": rid()}
        )
    assert err(envelope, "invalid") == {
        "code": "invalid",
        "message": "the token does not verify",
        "issues": ["token: not valid"],
    }


async def test_malformed_arguments_are_invalid_with_every_issue(server: RunningServer) -> None:
    async with McpCaller(server.url, AGENT_TOKEN) as agent:
        wrong_type = await agent.call("get_work", {"limit": "ten"})
        two_problems = await agent.call("get_work", {"limit": 0, "bogus": 1})
    err(wrong_type, "invalid", ["limit: expected integer"])
    err(two_problems, "invalid", ["limit: must be >= 1", "bogus: not allowed"])


LEAK = "SELECT secret FROM runs -- /var/lib/apc/engine.db"


async def test_a_failure_inside_a_tool_leaks_nothing(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*_: Any) -> Any:
        raise RuntimeError(LEAK)

    monkeypatch.setitem(dispatch.READS, "get_run", broken)
    with caplog.at_level(logging.ERROR):
        response = await post(
            server.url,
            {"Authorization": f"Bearer {AGENT_TOKEN}"},
            {**CALL, "params": {"name": "get_run", "arguments": {"runId": "r_1"}}},
        )
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"] == {
        "ok": False,
        "error": {"code": "retry", "message": "internal error"},
    }
    assert LEAK not in response.text and "Traceback" not in response.text
    assert any(LEAK in (r.exc_text or "") for r in caplog.records)


async def test_an_exception_escaping_the_engine_is_answered_generically(
    server: RunningServer, engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*_: Any) -> Any:
        raise OSError(LEAK)

    monkeypatch.setattr(engine, "call", broken)
    with caplog.at_level(logging.ERROR, logger="apc.calls"):
        response = await post(server.url, {"Authorization": f"Bearer {AGENT_TOKEN}"})
    result = response.json()["result"]
    assert result["isError"] is True
    err(result["structuredContent"], "retry")
    assert result["structuredContent"]["error"]["message"] == (
        "the server could not complete this call; retry with the same requestId"
    )
    assert LEAK not in response.text and "Traceback" not in response.text
    assert [r.getMessage() for r in caplog.records if r.name == "apc.calls"] == [
        f"agent:{AGENT} describe raised"
    ]


async def test_at_debug_each_call_is_logged_with_identity_tool_outcome_and_time(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="apc.calls"):
        async with McpCaller(server.url, MIRA_TOKEN) as mira:
            await mira.call("describe")
            await mira.call("get_run", {"runId": "r_none"})
    lines = [r.getMessage() for r in caplog.records if r.name == "apc.calls"]
    assert [line.rsplit(" ", 1)[0] for line in lines] == [
        "person:mira@example.com describe ok",
        "person:mira@example.com get_run not_found",
    ]
    assert all(line.rsplit(" ", 1)[1].endswith("ms") for line in lines)
