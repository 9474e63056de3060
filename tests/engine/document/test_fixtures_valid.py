"""Every conformance fixture and every sample process is valid, and loads into the model it describes."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.document import CHECK_PROFILE, PARALLEL_PROFILE, load_path

REPO_DIR = Path(__file__).resolve().parents[3]
SPEC_DIR = REPO_DIR.parent / "shared" / "agentprocess"
"""The reference copy of the specification: /work/shared/agentprocess."""

FIXTURES = sorted(p for p in (SPEC_DIR / "conformance" / "fixtures").iterdir() if p.is_dir())
SAMPLES = sorted(p for p in (REPO_DIR / "sample_processes").iterdir() if p.is_dir())
PROFILES = {"major-incident": {PARALLEL_PROFILE}, "vendor-check": {CHECK_PROFILE}}


def test_all_twelve_fixtures_are_present() -> None:
    assert len(FIXTURES) == 12


def test_there_are_sample_processes() -> None:
    assert SAMPLES


@pytest.mark.parametrize("folder", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_conformance_fixture_is_valid(folder: Path) -> None:
    loaded = load_path(folder)

    assert loaded.issues == ()
    assert loaded.process is not None
    assert loaded.name == folder.name == loaded.process.name
    assert loaded.profiles == PROFILES.get(folder.name, set())
    assert loaded.content_hash is not None and len(loaded.content_hash) == 64


@pytest.mark.parametrize("folder", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_sample_process_is_valid(folder: Path) -> None:
    loaded = load_path(folder)

    assert [str(issue) for issue in loaded.issues] == []
    assert loaded.process is not None
    assert loaded.name == folder.name


def test_the_parallel_fixture_loads_its_branches_and_join() -> None:
    process = load_path(SPEC_DIR / "conformance" / "fixtures" / "major-incident").process
    assert process is not None

    respond = process.step("respond")
    assert (respond.kind, respond.branches, respond.next) == (
        "parallel",
        ("operations", "security", "communications"),
        "close_review",
    )
    assert [process.step(s).next for s in respond.branches] == ["join", "join", "join"]
    assert process.branch_of("security") == "respond"
    assert process.branch_of("close_review") is None
    assert process.step("close_review").on_reject == "respond"
    assert process.profiles == {PARALLEL_PROFILE}


def test_the_check_fixture_loads_its_three_questions() -> None:
    process = load_path(SPEC_DIR / "conformance" / "fixtures" / "vendor-check").process
    assert process is not None

    step = process.step("check_vendor")
    assert step.check is not None
    yes_no, choice, rubric = step.check
    assert (yes_no.kind, yes_no.pass_at, yes_no.fail_below) == ("yes_no", 0.9, 0.5)
    assert (choice.kind, choice.pass_choices, choice.unsure_choices, choice.confidence) == (
        "choice",
        ("states",),
        ("unclear",),
        None,
    )
    assert [name for name, _ in choice.choices] == ["states", "hedges", "unclear"]
    assert (rubric.kind, rubric.pass_level, rubric.confidence, len(rubric.levels)) == ("rubric", 2, 0.8, 3)
    assert step.advisory is False
    assert step.routes_wire() == [{"to": "approve"}, {"to": "decline"}]
    assert process.requires_systems == ("sanctions-screening",)
