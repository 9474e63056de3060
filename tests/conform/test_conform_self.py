"""`apc conform --self` in `make test`: every check passes against our own server, none is skipped,
both profiles are offered, and the checks cover every error code tools.md lists for every tool and
every step of decide's precedence order.

The list of what must be covered is written here from tools.md (and the spec sections it points to),
and `test_the_required_list_is_what_tools_md_says` ties each entry to the words of its section, so
the list cannot silently drift from the document. `retry` is left out: it is transient server state
that no client can provoke on any server.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

from conform.suite import checks
from tests.conform.conform_support import SelfRun
from tests.support.schemas import SPEC

TOOLS_MD = (SPEC / "spec" / "tools.md").read_text(encoding="utf-8")

REQUIRED: dict[str, set[str]] = {
    "describe": {"invalid"},
    "list_processes": {"invalid"},
    "start_run": {"invalid", "not_found"},
    "get_run": {"invalid", "not_found"},
    "get_work": {"invalid"},
    "claim": {
        "invalid", "not_found", "forbidden",
        "conflict:claimed_by_other", "conflict:claimed_by_you", "conflict:not_ready", "conflict:run_ended",
    },
    "renew": {"invalid", "stale", "forbidden", "conflict:run_ended"},
    "upload": {"invalid"},
    "submit": {"invalid", "not_accepted", "stale", "forbidden", "conflict:run_ended"},
    "escalate": {"invalid", "stale", "forbidden", "conflict:run_ended"},
    "decide": {
        "invalid", "not_accepted", "stale", "forbidden", "not_found",
        "conflict:run_ended", "conflict:already_decided",
    },
    "cancel": {"invalid", "forbidden", "not_found", "conflict:run_ended"},
    "send_event": {"invalid", "not_accepted", "forbidden", "not_found", "conflict:run_ended"},
    "list_runs": {"invalid"},
}  # fmt: skip
"""Per tool, the errors tools.md gives it: in its own section, or through the rules every tool follows
(a schema violation is `invalid`, spec §6 rule 3; a token that does not verify is `invalid` "on any
tool that takes one"; every write to an ended run is `run_ended`, spec §3.5; an unknown run, step or
process is `not_found`, spec §4.3; tools for one kind of identity refuse the others, spec §4.1)."""

GENERAL = {
    "invalid": "spec §6 rule 3",
    "conflict:run_ended": "spec §3.5",
    "not_found": "spec §4.3",
    "forbidden": "spec §4.1",
    "stale": "spec §6 rule 2",
}
"""Where an error that a tool's own section does not spell out comes from."""
OWN_RULES = {("send_event", "not_accepted"): "spec §6 rule 3 (the run-data cap bounds held event data)"}

PRECEDENCE = ["run_ended", "already_decided", "not_found", "stale", "forbidden", "not_accepted"]
"""tools.md decide: "Errors, in the order checked"."""


def _section(tool: str) -> str:
    match = re.search(rf"^## {tool}\n(.*?)(?=^## |\Z)", TOOLS_MD, re.S | re.M)
    assert match, tool
    return match.group(1)


def _covered(run: SelfRun) -> set[str]:
    return {key for check in run.report["checks"] if check["status"] == "PASS" for key in check["covers"]}


def test_every_check_passes_and_none_is_skipped(self_run: SelfRun) -> None:
    report = self_run.report
    assert self_run.returncode == 0, self_run.stderr + self_run.stdout[-3000:]
    assert [c["name"] for c in report["checks"] if c["status"] != "PASS"] == []
    assert report["totals"] == {"pass": len(checks()), "fail": 0, "skip": 0}
    assert [c["name"] for c in report["checks"]] == [c.name for c in checks()]
    assert set(report["describe"]["profiles"]) == {"parallel-1", "check-1"}
    assert report["exitCode"] == 0


def test_the_text_report_has_a_line_per_check_and_a_summary_per_group(self_run: SelfRun) -> None:
    lines = self_run.stdout.splitlines()
    passed = [line for line in lines if line.startswith("PASS ")]
    assert [line.split()[1] for line in passed] == [c.name for c in checks()]
    assert "PASS agent.claim-conflicts (tools.md claim)" in lines
    total = len(checks())
    assert re.search(rf"^{total} checks: {total} passed in \d+\.\d s$", self_run.stdout, re.M)
    for group in ("describe", "agent", "people", "time", "parallel", "check"):
        assert re.search(rf"^{group} +\d+ passed$", self_run.stdout, re.M), group
    created = len(self_run.report["created"]["runs"])
    assert created > 100
    assert f"created {created} runs" in self_run.stdout


def test_the_report_lists_what_the_run_created_and_cancelled(self_run: SelfRun) -> None:
    created = self_run.report["created"]
    runs = {run["id"]: run for run in created["runs"]}
    started = {
        entry["answer"]["data"]["run"]["id"]
        for entry in self_run.trace
        if entry["tool"] == "start_run" and entry["answer"]["ok"]
    }
    assert set(runs) == started
    assert {run["mode"] for run in runs.values()} == {"test", "live"}
    assert sum(run["mode"] == "live" for run in runs.values()) <= 3
    assert set(created["cancelled"]) <= set(runs)
    cancelled_at_the_end = {
        entry["arguments"]["runId"]
        for entry in self_run.trace
        if entry["check"] == "cleanup" and entry["tool"] == "cancel"
    }
    assert cancelled_at_the_end == set(created["cancelled"])
    uploads = {
        e["answer"]["data"]["id"] for e in self_run.trace if e["tool"] == "upload" and e["answer"]["ok"]
    }
    assert set(created["uploads"]) == uploads


def test_the_junit_report_has_a_suite_per_group(self_run: SelfRun) -> None:
    root = ET.fromstring(self_run.junit)
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("skipped")) == (
        "testsuites",
        str(len(checks())),
        "0",
        "0",
    )
    suites = {suite.get("name"): suite for suite in root}
    assert list(suites) == list(dict.fromkeys(c.group for c in checks()))
    cases = suites["agent"].findall("testcase")
    assert [case.get("name") for case in cases] == [c.name.split(".", 1)[1] for c in checks(("agent",))]
    assert {case.get("classname") for case in cases} == {"conform.agent"}
    section = cases[0].find("properties/property")
    assert section is not None and section.get("name") == "section"


def test_every_error_of_every_tool_is_covered(self_run: SelfRun) -> None:
    covered = _covered(self_run)
    missing = sorted(
        f"{tool}/{code}"
        for tool, codes in REQUIRED.items()
        for code in codes
        if f"{tool}/{code}" not in covered
    )
    assert missing == []


def test_every_step_of_decide_precedence_is_covered(self_run: SelfRun) -> None:
    covered = _covered(self_run)
    steps = [f"decide/precedence:{a}>{b}" for a, b in itertools.pairwise(PRECEDENCE)]
    assert [step for step in steps if step not in covered] == []


def test_the_required_list_is_what_tools_md_says() -> None:
    """Each required error is named in its tool's section of tools.md, or comes from a rule for every
    tool; each tool's section names no conflict issue or error code the list leaves out."""
    tools = re.findall(r"^## (\w+)$", TOOLS_MD, re.M)
    assert sorted(tools) == sorted(REQUIRED)
    for tool, codes in REQUIRED.items():
        section = _section(tool)
        for code in codes:
            word = code.split(":")[-1]
            assert (
                f"`{word}`" in section
                or f'"{word}"' in section
                or code in GENERAL
                or (tool, code) in OWN_RULES
            ), (tool, code)
        named = set(re.findall(r"`(invalid|not_accepted|stale|conflict|forbidden|not_found)`", section))
        named |= {
            f"conflict:{issue}"
            for issue in re.findall(r'"(run_ended|already_decided|claimed_by_\w+|not_ready)"', section)
        }
        assert named - {"conflict"} <= codes, (tool, named - codes)
    decide = _section("decide")
    order = decide[decide.index("in the order checked") :]
    positions = [
        order.index(f"`{name}`" if name not in ("run_ended", "already_decided") else f'"{name}"')
        for name in PRECEDENCE
    ]
    assert positions == sorted(positions)
