"""The runner's parts on their own: config parsing, the server clock, expectations, the report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conform import config as conform_config
from conform.checks.arguments import CASES, TOOLS
from conform.clock import ServerClock, parse_time
from conform.expect import CheckFailed, equal, equal_time, near, same
from conform.report import Report, Result
from tests.support.schemas import SCHEMAS, validator

IDENTITIES: dict[str, Any] = {
    "operator": {"person": "ops@example.com", "token": "tok-operator"},
    "person1": {"person": "one@example.com", "token": "tok-one"},
    "person2": {"person": "two@example.com", "token": "tok-two"},
    "outsider": {"person": "out@example.com", "token": "tok-out"},
    "agent1": {"token": "tok-a1", "id": "a_one"},
    "agent2": {"token_env": "AGENT2_TOKEN"},
}


def _raw(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "server": {"url": "http://h/mcp", "speed": 60},
        "group": {"id": "g"},
        "identities": dict(IDENTITIES),
    }
    raw.update(changes)
    return raw


def test_a_config_names_identities_group_speed_and_servers() -> None:
    parsed = conform_config.parse(_raw(), env={"AGENT2_TOKEN": "tok-a2"})
    assert (parsed.servers, parsed.speed, parsed.group) == (("http://h/mcp",), 60.0, "g")
    assert parsed.actor("agent2") == conform_config.Actor("agent2", "agent", "tok-a2", None)
    assert parsed.actor("agent1").value == "a_one"
    assert parsed.actor("outsider") == conform_config.Actor(
        "outsider", "person", "tok-out", "out@example.com"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            _raw(identities={k: v for k, v in IDENTITIES.items() if k != "person2"}),
            "identities.person2: required (another member of the same group)",
        ),
        (_raw(server={"speed": 0}), "server.speed: expected a positive number"),
        (_raw(server={"url": "h/mcp"}), "server.url: expected an http(s) URL"),
        (_raw(group={}), "group.id: required"),
        (_raw(extra=1), "extra: unknown key"),
        (
            _raw(identities={**IDENTITIES, "agent1": {"token": "tok-a1", "person": "x@example.com"}}),
            "identities.agent1.person: unknown key",
        ),
        (
            _raw(identities={**IDENTITIES, "person1": {"person": "one@example.com", "token": "tok-two"}}),
            "every identity needs its own token",
        ),
        (
            _raw(identities={**IDENTITIES, "person1": {"person": "one@example.com"}}),
            "identities.person1.token: give token or token_env",
        ),
        (
            _raw(identities={**IDENTITIES, "agent2": {"token_env": "NOT_SET_ANYWHERE"}}),
            "environment variable NOT_SET_ANYWHERE is not set",
        ),
    ],
)
def test_config_errors_name_the_key(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(conform_config.ConfigError) as raised:
        conform_config.parse(raw, env={"AGENT2_TOKEN": "tok-a2"})
    assert message in str(raised.value)


def test_the_server_clock_moves_from_the_latest_sample_at_the_declared_speed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr("conform.clock.time.monotonic", lambda: now[0])
    clock = ServerClock(speed=60)
    start = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
    clock.saw(start)
    now[0] += 2
    assert clock.now() == start + timedelta(minutes=2)
    clock.saw(start)
    assert clock.now() == start + timedelta(minutes=2)
    clock.saw_text("2030-01-01T10:00:00+01:00")
    assert clock.now() == start + timedelta(minutes=2)
    clock.saw_text("2030-01-01T09:05:00Z")
    assert clock.now() == start + timedelta(minutes=5)
    assert clock.real_seconds(120) == 2


def test_times_need_an_offset() -> None:
    assert parse_time("2026-10-06T11:00:00+02:00") == datetime(2026, 10, 6, 9, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_time("2026-10-06T11:00:00")


def test_expectations_compare_json_values_and_word_the_failure() -> None:
    assert (
        same({"a": [1, 2.0]}, {"a": [1.0, 2]}) and not same(True, 1) and not same({"a": 1}, {"a": 1, "b": 2})
    )
    with pytest.raises(CheckFailed) as raised:
        equal("run state", "active", "ended")
    assert str(raised.value) == 'run state: expected "ended", got "active"'
    equal_time("due", "2026-10-06T09:00:01Z", "2026-10-06T09:00:00Z")
    about = near("2026-10-06T09:00:00Z")
    assert same({"due": "2026-10-06T09:00:01Z", "at": ["x"]}, {"due": about, "at": ("x",)})
    assert not same(["2026-10-06T09:00:02Z"], [about]) and not same("soon", about)
    with pytest.raises(CheckFailed) as raised:
        equal("step", {"due": "2026-10-06T10:00:00Z"}, {"due": about})
    assert (
        str(raised.value)
        == 'step: expected {"due": "about 2026-10-06T09:00:00Z"}, got {"due": "2026-10-06T10:00:00Z"}'
    )
    with pytest.raises(CheckFailed):
        equal_time("due", "2026-10-06T09:00:02Z", "2026-10-06T09:00:00Z")


def test_every_argument_case_breaks_the_published_schema() -> None:
    """The arguments group sends each case expecting `invalid`: each must really break the schema."""
    context = {"run": "r_1", "item": "w_1", "snapshot": "s", "token": "t"}
    index = json.loads((SCHEMAS / "index.json").read_text())
    assert sorted(TOOLS) == sorted(index["tools"])
    valid = [
        f"{tool}: {why}"
        for tool, why, build in CASES
        if validator(index["tools"][tool]["arguments"]).is_valid(build(context))
    ]
    assert valid == []


def _report() -> Report:
    report = Report(
        ("http://h/mcp",), "own", {"version": "core-2", "profiles": ["parallel-1"], "leaseSeconds": 600}, 60
    )
    report.results = [
        Result("agent.claim", "tools.md claim", "PASS", seconds=0.5, covers=("claim/forbidden",)),
        Result("agent.renew", "tools.md renew", "FAIL", "renew.expiresAt: expected x, got y", 1.25),
        Result("check.pass", "check profile §3", "SKIP", "profile check-1 not offered"),
    ]
    report.runs = {
        "r_1": {"process": "conform-chain", "mode": "test"},
        "r_2": {"process": "conform-vendor", "mode": "live"},
    }
    report.uploads, report.cancelled, report.seconds = ["f_1"], ["r_1"], 3.21
    return report


def test_the_text_report() -> None:
    report = _report()
    assert [r.line() for r in report.results] == [
        "PASS agent.claim (tools.md claim)",
        "FAIL agent.renew (tools.md renew): renew.expiresAt: expected x, got y",
        "SKIP check.pass (check profile §3): profile check-1 not offered",
    ]
    assert report.summary() == [
        "agent  1 passed, 1 failed",
        "check  0 passed, 1 skipped",
        "3 checks: 1 passed, 1 failed, 1 skipped in 3.2 s",
        "created 2 runs (1 test, 1 live) and 1 uploads; cancelled 1 left open (ids in --json)",
    ]
    assert report.exit_code == 1
    assert (
        report.header()
        == "apc conform: http://h/mcp (core-2; profiles parallel-1; lease 600 s; clock x60; schemas: own)"
    )


def test_the_json_report() -> None:
    data = _report().to_json()
    assert (data["format"], data["exitCode"], data["totals"]) == (1, 1, {"pass": 1, "fail": 1, "skip": 1})
    assert data["groups"] == {
        "agent": {"pass": 1, "fail": 1, "skip": 0},
        "check": {"pass": 0, "fail": 0, "skip": 1},
    }
    assert data["checks"][1] == {
        "name": "agent.renew",
        "group": "agent",
        "section": "tools.md renew",
        "status": "FAIL",
        "message": "renew.expiresAt: expected x, got y",
        "seconds": 1.25,
        "covers": [],
    }
    assert data["created"] == {
        "runs": [
            {"id": "r_1", "process": "conform-chain", "mode": "test"},
            {"id": "r_2", "process": "conform-vendor", "mode": "live"},
        ],
        "uploads": ["f_1"],
        "cancelled": ["r_1"],
    }


def test_the_junit_report() -> None:
    root = ET.fromstring(_report().to_junit())
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "1", "1")
    agent = root.find("testsuite[@name='agent']")
    assert agent is not None and (agent.get("tests"), agent.get("failures")) == ("2", "1")
    failure = agent.find("testcase[@name='renew']/failure")
    assert failure is not None and failure.get("message") == "renew.expiresAt: expected x, got y"
    skipped = root.find("testsuite[@name='check']/testcase[@name='pass']/skipped")
    assert skipped is not None and skipped.get("message") == "profile check-1 not offered"
