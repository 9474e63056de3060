"""A PostgreSQL test never passes silently without its database: skipped with the reason on a
developer machine, failed under CI (`CI` set)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TARGET = "tests/engine/store/test_query_plans_postgres.py::test_every_read_query_uses_an_index"
NOWHERE = "postgresql://postgres:pw-not-shown@127.0.0.1:1/test"


def _pytest(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["APC_TEST_DATABASE_URL"] = NOWHERE
    if ci:
        env["CI"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", TARGET, "-n", "0", "-p", "no:randomly"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("ci", [False, True], ids=["developer", "ci"])
def test_an_unreachable_database_skips_with_the_reason_or_fails_under_ci(ci: bool) -> None:
    result = _pytest(ci)
    reason = "PostgreSQL at postgresql://postgres:***@127.0.0.1:1/test is not reachable: "
    assert reason in result.stdout, result.stdout
    assert "pw-not-shown" not in result.stdout + result.stderr
    if ci:
        assert result.returncode == 1, result.stdout
        assert "(CI requires it)" in result.stdout and "1 error" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "SKIPPED [1]" in result.stdout and "1 skipped" in result.stdout
