"""What `tools/list` tells an MCP client: titles, hints, a description for every argument, and an
output schema for the whole envelope that accepts what the spec's result schemas accept.

Every envelope the engine, conformance and endpoint tests receive is also checked against the
published output schema (tests/envelopes.py, called from each support module's `ok` and `err`), so
the fixtures driven to their outcomes and the audit's hundreds of calls all pass through it. The
tests here add the fixtures' own declarations and the schema's shape and strictness.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry

from engine.clock import ManualClock
from engine.core import Engine
from engine.document import load_path
from engine.evaluator.scripted import ScriptedEvaluator
from engine.http.app import RunningServer
from engine.http.tool_meta import ARGUMENT_WORDS, TOOL_ARGUMENT_WORDS, TOOLS, input_schema, output_schema
from engine.identity import Identity
from engine.tools.arguments import ARGUMENTS
from tests.engine.http.http_support import AGENT_TOKEN, MIRA_TOKEN, OPS_TOKEN, make_org
from tests.support.envelopes import output_problems
from tests.support.mcp import McpCaller
from tests.support.schemas import SPEC, validator

AGENT, MIRA = Identity("agent", "a_screener"), Identity("person", "mira@example.com")
OPS = Identity("person", "ops@example.com", operator=True)
READS = {"describe", "list_processes", "get_run", "get_work", "list_runs"}
FIXTURES = sorted((SPEC / "conformance" / "fixtures").iterdir())


async def listed_tools(server: RunningServer) -> list[dict[str, Any]]:
    async with McpCaller(server.url, AGENT_TOKEN) as client:
        return await client.list_tools()


async def test_every_tool_has_a_title_a_description_and_the_hints_its_effect_calls_for(
    server: RunningServer,
) -> None:
    tools = await listed_tools(server)
    hints = {
        t["name"]: (
            t["annotations"].get("readOnlyHint"),
            t["annotations"].get("destructiveHint"),
            t["annotations"].get("idempotentHint"),
        )
        for t in tools
    }
    assert hints == {
        "describe": (True, None, None),
        "list_processes": (True, None, None),
        "start_run": (False, False, True),
        "get_run": (True, None, None),
        "get_work": (True, None, None),
        "claim": (False, False, True),
        "renew": (False, False, True),
        "upload": (False, False, True),
        "submit": (False, False, True),
        "escalate": (False, False, True),
        "decide": (False, True, True),
        "cancel": (False, True, True),
        "send_event": (False, False, True),
        "list_runs": (True, None, None),
    }
    for tool in tools:
        assert tool["title"] == tool["annotations"]["title"] == TOOLS[tool["name"]].title
        assert tool["description"] == TOOLS[tool["name"]].description
        assert tool["annotations"]["openWorldHint"] is False
        writes = "requestId" in tool["inputSchema"]["properties"]
        assert writes is (tool["name"] not in READS), "a requestId makes a write idempotent"


def test_every_argument_nested_ones_too_has_a_description_and_no_word_is_stale() -> None:
    used: set[str] = set()
    for tool, model in ARGUMENTS.items():
        schema = input_schema(tool)
        tables = [schema["properties"], *(d["properties"] for d in schema.get("$defs", {}).values())]
        for table in tables:
            for name, prop in table.items():
                assert prop["description"].strip(), f"{tool}.{name}"
                used.add(name)
        assert set(schema["properties"]) == set(model.model_fields)
    assert set(ARGUMENT_WORDS) == used
    assert {(tool, name) for tool, name in TOOL_ARGUMENT_WORDS} <= {
        (tool, name) for tool, model in ARGUMENTS.items() for name in model.model_fields
    }


@pytest.mark.parametrize("tool", list(ARGUMENTS))
def test_each_output_schema_is_a_self_contained_object_schema_of_the_envelope(tool: str) -> None:
    schema = output_schema(tool)
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert "$id" not in schema and "title" in schema
    refs = {ref for ref in _refs(schema)}
    assert all(ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"] for ref in refs)
    refused = {
        "no data": {"ok": True},
        "data and error": {"ok": True, "data": {}, "error": {"code": "invalid", "message": "m"}},
        "unknown code": {"ok": False, "error": {"code": "broken", "message": "m"}},
        "no message": {"ok": False, "error": {"code": "invalid"}},
        "extra key": {"ok": False, "error": {"code": "invalid", "message": "m"}, "trace": "x"},
        "ok not boolean": {"ok": "yes", "error": {"code": "invalid", "message": "m"}},
    }
    for case, envelope in refused.items():
        assert output_problems(tool, envelope) != [], case
    accepted = {
        "ok": False,
        "error": {"code": "stale", "message": "the run moved on", "issues": ["snapshot"]},
    }
    assert output_problems(tool, accepted) == []


def test_a_result_with_a_key_the_server_never_sends_is_refused() -> None:
    described = {
        "protocol": "agentprocess",
        "version": "core-2",
        "profiles": ["parallel-1"],
        "leaseSeconds": 600,
        "person": {"format": "email"},
        "tools": list(ARGUMENTS),
        "maxUploadBytes": 1024,
        "limits": {
            "runDataBytes": 1024,
            "checkPass": 0.8,
            "checkFail": None,
            "checkConfidence": 0.7,
            "checkStateBytes": 4096,
        },
    }
    assert validator("tools/describe.result.json").is_valid(described)
    assert output_problems("describe", {"ok": True, "data": described}) == []
    assert output_problems("describe", {"ok": True, "data": {**described, "secret": 1}}) != []
    assert output_problems("describe", {"ok": True, "data": {**described, "leaseSeconds": "600"}}) != []


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
async def test_each_fixture_published_started_and_read_fits_both_schemas(
    fixture: Path, tmp_path: Path
) -> None:
    """A fixture's input and output declarations, as list_processes, start_run, get_run, get_work and
    claim quote them, fit the spec's result schema and the published output schema alike."""
    evaluator = ScriptedEvaluator("defaults", 0.9, 0.9, {})
    engine = await Engine.open(tmp_path / "data", make_org(), clock=ManualClock(), evaluator=evaluator)
    try:
        process = load_path(fixture).process
        assert process is not None
        published = await engine.publish(fixture, dict.fromkeys(process.roles, "g_finance"))
        assert published.ok, published.issues
        _both("describe", await engine.call(AGENT, "describe", {}))
        _both("list_processes", await engine.call(AGENT, "list_processes", {}))
        inputs = {field.name: _sample(field.declared) for field in process.inputs}
        started = await engine.call(
            MIRA, "start_run", {"process": fixture.name, "inputs": inputs, "requestId": "r1", "mode": "test"}
        )
        _both("start_run", started)
        assert started["ok"], started
        run_id = started["data"]["run"]["id"]
        _both("get_run", await engine.call(OPS, "get_run", {"runId": run_id}))
        _both("list_runs", await engine.call(OPS, "list_runs", {}))
        _both("get_work", await engine.call(MIRA, "get_work", {}))
        work = await engine.call(AGENT, "get_work", {})
        _both("get_work", work)
        for item in work["data"]["items"][:1]:
            _both(
                "claim", await engine.call(AGENT, "claim", {**item["claim"]["arguments"], "requestId": "c1"})
            )
    finally:
        await engine.close()


def _sample(declared: Any) -> Any:
    spec = {"type": declared} if isinstance(declared, str) else declared
    if spec.get("one_of"):
        return spec["one_of"][0]
    if spec["type"] == "list":
        return [_sample(spec["items"])] if "items" in spec else []
    samples = {"string": "text", "number": 2, "boolean": True, "date": "2026-10-07", "object": {}}
    return {**samples, "datetime": "2026-10-07T09:00:00Z", "person": "lena@example.com"}[spec["type"]]


def _both(tool: str, envelope: dict[str, Any]) -> None:
    """The spec accepts it (data or error) and the published schema accepts the whole envelope."""
    if envelope["ok"]:
        assert validator(f"tools/{tool}.result.json").is_valid(envelope["data"]), (tool, envelope)
    else:
        assert validator("tool-error.json").is_valid(envelope["error"]), (tool, envelope)
    assert output_problems(tool, envelope) == [], (tool, envelope)


async def test_a_stateless_get_answers_405_after_authentication(server: RunningServer) -> None:
    accept = {"Accept": "text/event-stream"}
    async with httpx.AsyncClient(timeout=5) as client:
        anonymous = await client.get(server.url, headers=accept)
        known = await client.get(server.url, headers={**accept, "Authorization": f"Bearer {MIRA_TOKEN}"})
        posted = await client.post(
            server.url,
            headers={
                "Authorization": f"Bearer {OPS_TOKEN}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert anonymous.status_code == 401
    assert (known.status_code, known.headers["allow"]) == (405, "POST")
    assert posted.status_code == 200 and len(posted.json()["result"]["tools"]) == len(ARGUMENTS)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def test_the_validators_need_no_registry() -> None:
    """An MCP client compiles the schema with an empty registry: nothing may point outside it."""
    for tool in ARGUMENTS:
        text = json.dumps(output_schema(tool))
        assert "http" not in text and "$id" not in text
        Draft202012Validator(output_schema(tool), registry=Registry())
