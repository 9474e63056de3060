"""`apc validate`: verdicts, issues, exit codes 0/1/2, and the exact JSON shape."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine import cli
from engine.document import load

REPO_DIR = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO_DIR.parent / "shared" / "agentprocess"
"""The reference copy of the specification: /work/shared/agentprocess."""

VALID = "---\nname: demo\ndescription: A demo process.\nsteps:\n  - id: done\n    finish: done\n---\nBody.\n"
INVALID = (
    "---\nname: demo\ndescription: A demo process.\nsteps:\n"
    "  - id: work\n    agent: Do it.\n    next: aprove\n  - id: done\n    finish: done\n---\n"
)
HASH = load(VALID).content_hash


@pytest.fixture
def valid(tmp_path: Path) -> Path:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(VALID)
    return folder


@pytest.fixture
def invalid(tmp_path: Path) -> Path:
    path = tmp_path / "broken.md"
    path.write_text(INVALID)
    return path


def test_a_valid_folder_prints_its_verdict_and_exits_0(
    valid: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["validate", str(valid)]) == 0

    out, err = capsys.readouterr()
    assert out == f"{valid}: valid: demo (profiles: none; content hash {HASH})\n"
    assert err == ""


def test_an_invalid_file_prints_one_issue_per_line_and_exits_1(
    invalid: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["validate", str(invalid)]) == 1

    out, err = capsys.readouterr()
    assert out == f"{invalid}: invalid: 1 issue\n  steps.work.next: unknown step 'aprove'\n"
    assert err == ""


def test_several_paths_end_with_a_count(
    valid: Path, invalid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    renamed = tmp_path / "other"
    renamed.mkdir()
    (renamed / "PROCESS.md").write_text(VALID)

    assert cli.main(["validate", str(valid), str(invalid), str(renamed)]) == 1

    assert capsys.readouterr().out.splitlines() == [
        f"{valid}: valid: demo (profiles: none; content hash {HASH})",
        f"{invalid}: invalid: 1 issue",
        "  steps.work.next: unknown step 'aprove'",
        f"{renamed}: invalid: 1 issue",
        "  name: 'demo' differs from its folder name 'other'; they must be equal",
        "1 valid, 2 invalid",
    ]


def test_json_prints_one_array_with_one_object_per_path(
    valid: Path, invalid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "garbage.md"
    garbage.write_text("no frontmatter\n")

    assert cli.main(["validate", "--json", str(valid), str(invalid), str(garbage)]) == 1

    out, err = capsys.readouterr()
    assert err == ""
    assert json.loads(out) == [
        {
            "path": str(valid),
            "ok": True,
            "name": "demo",
            "contentHash": HASH,
            "profiles": [],
            "issues": [],
            "warnings": [],
        },
        {
            "path": str(invalid),
            "ok": False,
            "name": "demo",
            "contentHash": None,
            "profiles": [],
            "issues": [{"path": "steps.work.next", "message": "unknown step 'aprove'"}],
            "warnings": [],
        },
        {
            "path": str(garbage),
            "ok": False,
            "name": None,
            "contentHash": None,
            "profiles": [],
            "issues": [{"path": "", "message": "no frontmatter: the first line must be exactly '---'"}],
            "warnings": [],
        },
    ]


def test_json_lists_the_profiles_a_document_needs(capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = SPEC_DIR / "conformance" / "fixtures"

    assert (
        cli.main(["validate", "--json", str(fixtures / "vendor-check"), str(fixtures / "major-incident")])
        == 0
    )

    results = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["ok"], r["profiles"]) for r in results] == [
        ("vendor-check", True, ["check-1"]),
        ("major-incident", True, ["parallel-1"]),
    ]


def test_no_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate"]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith("apc validate: error: the following arguments are required: PATH\n")


def test_a_missing_path_is_a_usage_error_and_nothing_is_validated(
    valid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.md"

    assert cli.main(["validate", "--json", str(valid), str(missing)]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"apc validate: error: no such file or folder: {missing}\n"


def test_a_folder_without_process_md_is_an_invalid_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()

    assert cli.main(["validate", str(tmp_path / "empty")]) == 1

    assert (
        capsys.readouterr().out
        == f"{tmp_path / 'empty'}: invalid: 1 issue\n  the folder 'empty' has no PROCESS.md\n"
    )


def test_no_command_prints_help_and_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2

    assert "validate" in capsys.readouterr().err


def test_help_describes_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", "--help"]) == 0

    out = capsys.readouterr().out
    assert out.startswith("usage: apc validate [-h] [--json] [--strict] PATH [PATH ...]\n")
    assert (
        "  0  every document is valid (it may have warnings, unless --strict)\n"
        "  1  at least one document has issues (or, with --strict, warnings)\n"
    ) in out


def test_a_new_subcommand_is_one_registered_function(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = set(cli.COMMANDS)
    monkeypatch.setattr(cli, "COMMANDS", dict(cli.COMMANDS))

    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--times", type=int, default=1)

    @cli.command("echo-test", help="repeat a word", description="Repeat a word.", arguments=arguments)
    def echo(args: argparse.Namespace) -> int:
        print("word " * args.times)
        return 3

    assert cli.main(["echo-test", "--times", "2"]) == 3
    assert capsys.readouterr().out == "word word \n"
    assert set(cli.COMMANDS) == before | {"echo-test"}
    assert "echo-test" in cli.build_parser().format_help()


def test_python_dash_m_engine_cli_runs_the_same_command(valid: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "engine.cli", "validate", "--json", str(valid)],
        capture_output=True,
        text=True,
        cwd=REPO_DIR,
        timeout=60,
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)[0]["contentHash"] == HASH


def test_files_that_are_no_process_documents_are_skipped_with_a_note(
    valid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme, answers = tmp_path / "README.md", tmp_path / "check-answers.toml"
    readme.write_text("# Processes\n")
    answers.write_text("[answers]\n")

    assert cli.main(["validate", str(valid), str(readme), str(answers)]) == 0

    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{valid}: valid: demo (profiles: none; content hash {HASH})",
        "1 valid, 0 invalid, 2 skipped",
    ]
    assert err.splitlines() == [
        f"apc validate: skipped {readme}: a README, not a process document",
        f"apc validate: skipped {answers}: not a PROCESS.md or .md file",
    ]


def test_skipped_files_leave_the_exit_status_to_the_documents(
    invalid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a process\n")

    assert cli.main(["validate", "--json", str(invalid), str(notes)]) == 1

    out, err = capsys.readouterr()
    assert [r["path"] for r in json.loads(out)] == [str(invalid)]
    assert err == f"apc validate: skipped {notes}: not a PROCESS.md or .md file\n"


def test_nothing_left_to_validate_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "readme.md"
    readme.write_text("# Notes\n")

    assert cli.main(["validate", str(readme)]) == 2

    assert capsys.readouterr().err.splitlines() == [
        f"apc validate: skipped {readme}: a README, not a process document",
        "apc validate: error: nothing to validate: every path was skipped",
    ]


def test_the_documented_glob_over_the_sample_folder_validates_every_sample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    paths = sorted((REPO_DIR / "sample_processes").glob("*"))

    assert cli.main(["validate", *map(str, paths)]) == 0

    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "10 valid, 0 invalid, 3 skipped"
    assert len(err.splitlines()) == 3, "the README, the scripted check answers and the demo's relations"
