"""`self_run`: one `apc conform --self` for the whole session, its JSON report and its trace."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.conform.conform_support import SelfRun

RUN_TIMEOUT_SECONDS = 300


@pytest.fixture(scope="session")
def self_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SelfRun]:
    """The runner against our own server exactly as a user runs it: `apc conform --self`."""
    out = tmp_path_factory.mktemp("conform-self")
    report, junit, trace = out / "report.json", out / "report.xml", out / "trace.jsonl"
    command = [
        sys.executable, "-c", "import sys; from console.cli import main; sys.exit(main())",
        "conform", "--self", "--json", str(report), "--junit", str(junit), "--trace", str(trace),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS, check=False)
    lines = trace.read_text(encoding="utf-8").splitlines() if trace.exists() else []
    yield SelfRun(
        done.returncode,
        done.stdout,
        done.stderr,
        json.loads(report.read_text(encoding="utf-8")) if report.exists() else {},
        junit.read_text(encoding="utf-8") if junit.exists() else "",
        [json.loads(line) for line in lines],
    )
