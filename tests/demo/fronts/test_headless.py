"""`apc demo --headless`: twenty runs of all ten sample processes end as their processes allow, every
run record is a valid `get_run` result, and every checked step completed with its verdict or by a
person; once in-process, once as a real subprocess."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from console.embedded.samples import no_samples
from demo.cli import DEFAULT_HEADLESS_RUNS, DEFAULT_HEADLESS_SPEED, add_arguments, main, settings_from
from demo.fronts.headless import recorded_checks, run_headless
from demo.stories.stream import allowed_outcomes
from demo.system import DemoSettings
from demo.world.org import OPERATOR
from engine.document import load_path
from tests.demo.demo_support import schema_problems

REPO = Path(__file__).resolve().parents[3]
PROCESSES = {
    process.name: process
    for folder in (REPO / "sample_processes").iterdir()
    if folder.is_dir() and (process := load_path(folder).process) is not None
}
ALL = set(PROCESSES)
SPEED = 6000.0
FAST = DemoSettings(runs=20, speed=SPEED, seed=2, agents=4, lease_seconds=6000, port_start=29765)


async def test_twenty_runs_end_with_outcomes_of_their_processes_and_valid_records(tmp_path: Path) -> None:
    out = io.StringIO()
    settings = DemoSettings(**{**FAST.__dict__, "data_dir": tmp_path / "demo"})
    report = await run_headless(settings, out, time_limit=90)
    text = out.getvalue()
    assert report.ok, text
    assert (report.exit_code, report.runs, len(report.ended), report.unfinished) == (0, 20, 20, [])
    assert sorted(report.views) == sorted(e.run_id for e in report.ended)
    for ended in report.ended:
        view = report.views[ended.run_id]
        assert (view["run"]["id"], view["run"]["process"]) == (ended.run_id, ended.process)
        assert view["run"]["state"] == "ended"
        assert view["run"]["mode"] == ended.mode
        assert view["run"]["outcome"] == ended.outcome
        assert ended.allowed is True
        assert schema_problems(view) == [], ended
        assert checked_without_a_verdict(ended.process, view) == [], ended
    assert {e.process for e in report.ended} == ALL, "every sample process, the three with a check too"
    assert recorded_checks(report.views)["pass"] >= 1
    lines = text.splitlines()
    assert lines[0].startswith(f"apc demo: data in {tmp_path / 'demo'}, endpoint http://127.0.0.1:")
    assert lines[1] == f"published 10 processes: {', '.join(sorted(ALL))}"
    assert lines[2] == "checks answered by scripted:check-answers.toml"
    [checks] = [line for line in lines if line.startswith("checks: recorded ")]
    assert checks.endswith(
        f"; refused {sum(a.check_refused for a in report.agents)} "
        f"(fixed by the agent {sum(a.check_fixed for a in report.agents)}); "
        f"held for a person {sum(a.held for a in report.agents)}"
    )
    assert lines[-1].startswith("20/20 runs ended in ")
    assert lines[-1].endswith("s: every run ended with an outcome of its process")
    assert sum(1 for line in lines if line.startswith("[")) == 20
    assert (tmp_path / "demo" / "engine.db").is_file(), "a data folder given is kept"


def checked_without_a_verdict(process: str, view: Mapping[str, Any]) -> list[str]:
    """Completions of a checked step that carry no verdict, though no person completed them.

    A step with a check completes with its verdict (pass, or advisory), or by a person: an unsure
    verdict's hold decided (the verdict kept), or an agent's escalation completed (not checked).
    """
    steps = {s.id: s for s in PROCESSES[process].steps if s.check}
    found = []
    for step_id, record in view["data"]["steps"].items():
        if step_id not in steps:
            continue
        for entry in [record, *record.get("history", [])]:
            if "output" not in entry:
                continue
            check = entry.get("check")
            verdict = None if check is None else check["verdict"]
            by_person = entry["by"] == OPERATOR
            advisory = steps[step_id].advisory
            if not (
                (verdict == "pass" and not by_person)
                or (advisory and check is not None and check["advisory"])
                or (verdict == "unsure" and by_person)
                or (verdict is None and by_person)
            ):
                found.append(f"{step_id}: {verdict} by {entry['by']}")
    return found


def test_outcomes_are_judged_against_each_process() -> None:
    """The check the headless run relies on refuses an outcome its process cannot end with."""
    process = load_path(REPO / "sample_processes" / "purchase-order-approval").process
    assert process is not None
    assert "issued" in allowed_outcomes(process)
    assert "rejected" not in allowed_outcomes(process)
    assert "released" not in allowed_outcomes(process)


def test_a_real_subprocess_runs_the_story_and_exits_0() -> None:
    apc = Path(sys.executable).parent / "apc"
    assert apc.is_file(), "the apc command is installed with the package"
    done = subprocess.run(
        [
            str(apc),
            "demo",
            "--headless",
            "--runs",
            "3",
            "--speed",
            "6000",
            "--seed",
            "5",
            "--time-limit",
            "60",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=90,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines[-1].startswith("3/3 runs ended in ")
    assert lines[-1].endswith("s: every run ended with an outcome of its process")


def test_arguments_become_settings_and_bad_ones_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    headless = settings_from(parser.parse_args(["--headless"]))
    assert (headless.speed, headless.runs, headless.people.play_operator) == (
        DEFAULT_HEADLESS_SPEED,
        DEFAULT_HEADLESS_RUNS,
        True,
    )
    live = settings_from(parser.parse_args(["--speed", "120", "--seed", "9", "--agents", "5"]))
    assert (live.speed, live.seed, live.agents, live.runs, live.people.play_operator) == (
        120.0,
        9,
        5,
        None,
        False,
    )
    for argv, problem in (
        (["--headless", "--speed", "0"], "--speed must be positive"),
        (["--headless", "--runs", "0"], "--runs must be at least 1"),
        (["--agents", "9"], "--agents must be between 1 and 6"),
        (["--headless", "--time-limit", "-1"], "--time-limit must be positive"),
    ):
        assert main(argv) == 2
        assert capsys.readouterr().err == f"apc demo: error: {problem}\n"


def test_a_demo_without_its_samples_says_so_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "not-installed"
    monkeypatch.setattr("demo.cli.DemoSettings", partial(DemoSettings, samples=missing))
    assert main(["--headless", "--runs", "1"]) == 1
    assert capsys.readouterr().err == f"apc demo: error: {no_samples(missing)}\n"


def test_the_port_option_reaches_the_settings() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert settings_from(parser.parse_args(["--headless", "--port", "0"])).port == 0
    assert settings_from(parser.parse_args(["--headless"])).port is None
