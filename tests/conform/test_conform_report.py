"""The report: a line per check, a summary per group, and the JSON and JUnit files."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conform.report import Report, Result


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
