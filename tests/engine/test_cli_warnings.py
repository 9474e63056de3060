"""`apc validate` shows warnings apart from issues, in text and JSON; `--strict` makes them issues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import cli
from engine.document import load

WARNED = (
    "---\nname: demo\ndescription: A demo process.\nsteps:\n"
    "  - id: work\n    agent: Do it.\n    evidence: [link, link]\n"
    "  - id: hold\n    wait_for: paid\n    on_timeout: done\n"
    "  - id: done\n    finish: done\n---\n"
)
WARNED_AND_INVALID = WARNED.replace("on_timeout: done", "on_timeout: nowhere")
HASH = load(WARNED).content_hash
EVIDENCE = "steps.work.evidence[1]: 'link' is listed twice"
TIMEOUT = "steps.hold.on_timeout: has no timeout beside it: without one the wait never times out"


@pytest.fixture
def warned(tmp_path: Path) -> Path:
    path = tmp_path / "warned.md"
    path.write_text(WARNED)
    return path


@pytest.fixture
def both(tmp_path: Path) -> Path:
    path = tmp_path / "both.md"
    path.write_text(WARNED_AND_INVALID)
    return path


def test_a_valid_document_with_warnings_is_valid_and_lists_them(
    warned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["validate", str(warned)]) == 0

    assert capsys.readouterr().out.splitlines() == [
        f"{warned}: valid: demo (profiles: none; content hash {HASH}); 2 warnings",
        f"  warning: {EVIDENCE}",
        f"  warning: {TIMEOUT}",
    ]


def test_issues_come_first_then_warnings_and_the_count_names_both(
    warned: Path, both: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["validate", str(both), str(warned)]) == 1

    assert capsys.readouterr().out.splitlines() == [
        f"{both}: invalid: 1 issue; 2 warnings",
        "  steps.hold.on_timeout: unknown step 'nowhere'",
        f"  warning: {EVIDENCE}",
        f"  warning: {TIMEOUT}",
        f"{warned}: valid: demo (profiles: none; content hash {HASH}); 2 warnings",
        f"  warning: {EVIDENCE}",
        f"  warning: {TIMEOUT}",
        "1 valid, 1 invalid, 4 warnings",
    ]


def test_strict_makes_a_document_with_warnings_invalid(
    warned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["validate", "--strict", str(warned)]) == 1

    assert capsys.readouterr().out.splitlines() == [
        f"{warned}: invalid: 0 issues; 2 warnings",
        f"  warning: {EVIDENCE}",
        f"  warning: {TIMEOUT}",
    ]


@pytest.mark.parametrize("strict", [False, True])
def test_json_lists_warnings_apart_and_strict_sets_ok(
    warned: Path, strict: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["validate", "--json", *(["--strict"] if strict else []), str(warned)]

    assert cli.main(argv) == (1 if strict else 0)

    assert json.loads(capsys.readouterr().out) == [
        {
            "path": str(warned),
            "ok": not strict,
            "name": "demo",
            "contentHash": HASH,
            "profiles": [],
            "issues": [],
            "warnings": [
                {"path": "steps.work.evidence[1]", "message": "'link' is listed twice"},
                {
                    "path": "steps.hold.on_timeout",
                    "message": "has no timeout beside it: without one the wait never times out",
                },
            ],
        }
    ]
