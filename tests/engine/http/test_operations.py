"""Ready to operate: probes for load balancers, Prometheus metrics, one log line per request."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.clock import ManualClock
from engine.core import Engine
from engine.http.app import RunningServer
from engine.identity import Identity
from engine.notify import NotifyTarget
from tests.engine.http.http_support import AGENT, AGENT_TOKEN, MIRA, MIRA_TOKEN, OPS
from tests.support.mcp import McpCaller
from tests.support.processes import write_process

REPO = Path(__file__).resolve().parents[3]
REVIEW = """
---
name: review
description: A finance review due within the hour.
inputs:
  subject: string
steps:
  - id: review
    person: finance-approver
    task: Review the subject.
    due: 1h
    next: done
  - id: done
    finish: reviewed
---
Review it.
"""


def base(server: RunningServer) -> str:
    return server.url.removesuffix("/mcp")


async def get(url: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.get(url, headers=headers)


async def test_healthz_and_readyz_answer_without_a_token_and_whatever_the_host(server: RunningServer) -> None:
    foreign = {"Host": "10.1.2.3:8765"}
    health = await get(f"{base(server)}/healthz", **foreign)
    ready = await get(f"{base(server)}/readyz", **foreign)
    refused = await get(server.url, **foreign)
    async with httpx.AsyncClient() as client:
        posted = await client.post(f"{base(server)}/healthz")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready", "store": "ok"})
    assert refused.status_code == 421, "everything else still checks the Host"
    assert (posted.status_code, posted.headers["allow"]) == (405, "GET")


async def test_metrics_answer_a_scraper_that_names_the_server_by_its_address(server: RunningServer) -> None:
    """Prometheus on another host sends the address it scrapes as `Host`; a name still has to be
    allowed, and a page (it sends its `Origin`) is checked as everywhere, so refused."""
    url = f"{base(server)}/metrics"
    v4 = await get(url, Host="10.1.2.3:8765")
    v6 = await get(url, Host="[fd00::5]:8765")
    bare = await get(url, Host="10.1.2.3")
    named = await get(url, Host="metrics.attacker.example")
    rebound = await get(url, Host="127.0.0.1.attacker.example:8765")
    page = await get(url, Host="10.1.2.3:8765", Origin="http://attacker.example")
    mcp = await get(server.url, Host="10.1.2.3:8765")
    assert [v4.status_code, v6.status_code, bare.status_code] == [200, 200, 200]
    assert v4.headers["content-type"].startswith("text/plain; version=")
    assert "apc_open_runs " in v4.text
    assert [(r.status_code, r.text) for r in (named, rebound, page, mcp)] == [
        (421, "Invalid Host header"),
        (421, "Invalid Host header"),
        (421, "Invalid Host header"),
        (421, "Invalid Host header"),
    ]


async def test_readyz_is_503_when_the_store_does_not_answer(
    server: RunningServer, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def unreachable(key: str) -> str | None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(engine.store, "get_meta", unreachable)
    ready = await get(f"{base(server)}/readyz")
    health = await get(f"{base(server)}/healthz")
    assert (ready.status_code, ready.json()) == (503, {"status": "unavailable", "store": "unreachable"})
    assert health.status_code == 200, "the process is still up"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.endswith("_created"):
                found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_metrics_count_calls_by_tool_and_code_and_what_is_open(
    server: RunningServer, engine: Engine, clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine.org, "notify", (NotifyTarget("https://hooks.example.com/apc", ("overdue",)),))
    published = await engine.publish(
        write_process(tmp_path / "review", REVIEW), {"finance-approver": "g_finance"}
    )
    assert published.ok, published.issues
    starter = Identity("person", MIRA)
    run_ids: list[str] = []
    for mode in ("live", "live", "test"):
        started = await engine.call(
            starter,
            "start_run",
            {
                "process": "review",
                "inputs": {"subject": mode},
                "mode": mode,
                "requestId": f"s-{len(run_ids)}",
            },
        )
        run_ids.append(started["data"]["run"]["id"])
    clock.advance(hours=2)
    await engine.tick()
    cancelled = await engine.call(
        Identity("person", OPS, operator=True),
        "cancel",
        {"runId": run_ids[0], "reason": "dup", "requestId": "c1"},
    )
    assert cancelled["ok"], cancelled
    async with McpCaller(server.url, AGENT_TOKEN) as agent:
        await agent.call("describe")
        await agent.call("describe")
        await agent.call("get_run", {"runId": "r_missing"})
        await agent.call("no_such_tool")
    await get(server.url)

    scraped = await get(f"{base(server)}/metrics")

    assert scraped.headers["content-type"].startswith("text/plain; version=")
    found = samples(scraped.text)
    calls = {labels: value for (name, labels), value in found.items() if name == "apc_tool_calls_total"}
    assert calls == {
        (("code", "ok"), ("tool", "describe")): 2.0,
        (("code", "not_found"), ("tool", "get_run")): 1.0,
        (("code", "invalid"), ("tool", "unknown")): 1.0,
    }
    assert found[("apc_tool_call_duration_seconds_count", (("tool", "describe"),))] == 2.0
    assert found[("apc_tool_call_duration_seconds_bucket", (("le", "+Inf"), ("tool", "describe")))] == 2.0
    gauges = {
        name: found[(name, ())] for name in ("apc_open_runs", "apc_open_work_items", "apc_overdue_items")
    }
    assert gauges == {"apc_open_runs": 2.0, "apc_open_work_items": 2.0, "apc_overdue_items": 2.0}
    assert found[("apc_outbox_backlog", ())] == 2, "both live runs' overdue notices; the test run's never"
    assert found[("apc_http_requests_total", (("status", "401"),))] == 1.0


async def test_the_counts_behind_the_gauges_read_only_what_is_open(engine: Engine, tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "data" / "engine.db")
    try:
        plans = {
            table: " | ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}"))
            for table, sql in (
                ("runs", "SELECT COUNT(*) FROM runs WHERE state IN ('active', 'waiting')"),
                ("deliveries", "SELECT COUNT(*) FROM deliveries WHERE state = 'pending'"),
            )
        }
    finally:
        db.close()
    assert "USING COVERING INDEX runs_state (state=?)" in plans["runs"]
    assert plans["deliveries"] == "SCAN deliveries USING INDEX deliveries_due", "pending rows only"


async def test_every_request_is_logged_once_with_status_identity_and_duration_never_a_token(
    server: RunningServer, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="apc.http"):
        async with McpCaller(server.url, MIRA_TOKEN) as mira:
            await mira.call("describe")
        await get(server.url, Authorization="Bearer not-a-known-token")
        await get(f"{base(server)}/files/f_123?exp=1&sig=SECRET-SIGNATURE")
    records = [r for r in caplog.records if r.name == "apc.http"]
    lines = [re.sub(r" \d+\.\dms$", " <ms>", r.getMessage()) for r in records]
    assert lines[-3:] == [
        f"POST /mcp 200 person:{MIRA} describe ok <ms>",
        "GET /mcp 401 - <ms>",
        "GET /files/f_123 403 - <ms>",
    ]
    assert {r.status for r in records[-3:]} == {200, 401, 403}  # type: ignore[attr-defined]
    assert all(isinstance(r.duration_ms, float) for r in records)  # type: ignore[attr-defined]
    text = "\n".join(r.getMessage() + json.dumps(r.__dict__, default=str) for r in records)
    for secret in (MIRA_TOKEN, "not-a-known-token", "SECRET-SIGNATURE"):
        assert secret not in text


def test_serve_logs_json_lines_at_the_level_asked_for(tmp_path: Path) -> None:
    config = tmp_path / "org.toml"
    config.write_text(f'[[agents]]\nid = "{AGENT}"\ntoken = "{AGENT_TOKEN}"\n')
    command = [
        sys.executable,
        "-m",
        "engine.cli",
        "serve",
        "--config",
        str(config),
        "--data",
        str(tmp_path / "d"),
    ]
    command += ["--port", "0", "--log-format", "json", "--log-level", "INFO"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        first: list[dict[str, Any]] = []
        for line in process.stderr:
            first.append(json.loads(line))
            if first[-1]["message"].startswith("serving "):
                break
        url = first[-1]["message"].split()[1]
        asyncio.run(_describe_and_refuse(url))
        process.terminate()
        assert process.wait(timeout=10) == 0
        rest = [json.loads(line) for line in process.stderr.read().splitlines()]
    requests = [entry for entry in first + rest if entry["logger"] == "apc.http"]
    assert [(e["method"], e["path"], e["status"], e["identity"], e["calls"]) for e in requests][-2:] == [
        ("POST", "/mcp", 200, f"agent:{AGENT}", ["describe ok"]),
        ("GET", "/mcp", 401, "-", []),
    ]
    assert all(e["level"] == "info" and re.fullmatch(r"\d{4}-.+\+00:00", e["time"]) for e in requests)
    assert not any(e["logger"] == "apc.calls" for e in first + rest), "per-call lines are debug"
    assert AGENT_TOKEN not in json.dumps(first + rest)


async def _describe_and_refuse(url: str) -> None:
    async with McpCaller(url, AGENT_TOKEN) as client:
        await client.call("describe")
    await get(url, Authorization=f"Bearer {AGENT_TOKEN}x")
