"""Every tool result's JSON text equals its structured content, for every tool, answered ok or not.

A client may read either (spec §4 envelopes travel as both); if they ever differed, or the text were
not strict JSON (NaN, Infinity), a strict client could not read the run at all.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import mcp_types as types

from engine.core import Engine
from engine.http.app import RunningServer
from engine.http.endpoint import UNEXPECTED, result_of
from tests.engine.http.http_support import AGENT_TOKEN, MIRA_TOKEN, OPS_TOKEN, full_run, rid
from tests.support.rpc import Rpc


class Recorder(Rpc):
    """Every call checked as text and structure (`Rpc`), and which tools answered ok or not."""

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        super().__init__(client, url)
        self.seen: set[tuple[str, bool]] = set()

    async def call(self, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        envelope = await super().call(token, tool, arguments)
        self.seen.add((tool, envelope["ok"]))
        return envelope


async def fetch(url: str) -> tuple[int, bytes]:
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
        return response.status_code, response.content


async def test_every_tool_answers_text_equal_to_its_structured_content(
    server: RunningServer, engine: Engine
) -> None:
    async with httpx.AsyncClient() as client:
        rec = Recorder(server.url, client)
        await full_run(rec.call, fetch)
        await rec.call(AGENT_TOKEN, "describe", {})
        await rec.call(AGENT_TOKEN, "list_processes", {})
        await rec.call(MIRA_TOKEN, "list_runs", {"limit": 1})
        run = await rec.call(
            MIRA_TOKEN,
            "start_run",
            {"process": "screening", "inputs": {"vendorName": "Beta"}, "requestId": rid()},
        )
        run_id = run["data"]["run"]["id"]
        claimed = await rec.call(
            AGENT_TOKEN, "claim", {"runId": run_id, "stepId": "check_vendor", "requestId": rid()}
        )
        renewed = await rec.call(
            AGENT_TOKEN, "renew", {"token": claimed["data"]["token"], "progress": "half", "requestId": rid()}
        )
        await rec.call(
            AGENT_TOKEN, "escalate", {"token": renewed["data"]["token"], "note": "Stuck.", "requestId": rid()}
        )
        await rec.call(
            OPS_TOKEN, "send_event", {"runId": run_id, "name": "paid", "data": {"n": 1.5}, "requestId": rid()}
        )
        await rec.call(OPS_TOKEN, "cancel", {"runId": run_id, "reason": "Test over.", "requestId": rid()})
        upload = {"fileName": "a.txt", "contentType": "text/plain", "requestId": rid()}
        await rec.call(AGENT_TOKEN, "upload", {**upload, "contentBase64": base64.b64encode(b"x").decode()})
        for tool in engine.tools:
            await rec.call(MIRA_TOKEN, tool, {"bogus": 1})
    assert rec.seen == {(tool, ok) for tool in engine.tools for ok in (True, False)}


def test_a_result_json_cannot_carry_is_answered_as_retry_and_logged(caplog: Any) -> None:
    with caplog.at_level("ERROR", logger="apc.calls"):
        result = result_of({"ok": True, "data": {"total": float("nan")}})
    [content] = result.content
    assert isinstance(content, types.TextContent)
    assert json.loads(content.text) == result.structured_content == UNEXPECTED
    assert result.is_error is True
    assert [r.getMessage() for r in caplog.records] == ["a result held a number JSON cannot carry"]
