"""`self_run`: one `apc conform --self` for the whole test session, shared by every xdist worker."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conform.conform_support import SelfRun

RUN_TIMEOUT_SECONDS = 300


def _produce(out: Path) -> None:
    """The runner against our own server exactly as a user runs it; what it left in `out`."""
    command = [
        sys.executable, "-c", "import sys; from apc.cli import main; sys.exit(main())",
        "conform", "--self", "--json", str(out / "report.json"), "--junit", str(out / "report.xml"),
        "--trace", str(out / "trace.jsonl"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS, check=False)
    (out / "result.json").write_text(
        json.dumps({"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr})
    )


def _read(out: Path) -> SelfRun:
    result = json.loads((out / "result.json").read_text())
    report, junit, trace = out / "report.json", out / "report.xml", out / "trace.jsonl"
    return SelfRun(
        result["returncode"],
        result["stdout"],
        result["stderr"],
        json.loads(report.read_text(encoding="utf-8")) if report.exists() else {},
        junit.read_text(encoding="utf-8") if junit.exists() else "",
        [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
        if trace.exists()
        else [],
    )


@pytest.fixture(scope="session")
def self_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> SelfRun:
    """One run however many workers ask: the first takes a lock on the folder all workers share and
    runs it, the others wait on the lock and read what it left."""
    shared = (
        tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    )
    out = shared / "conform-self"
    out.mkdir(exist_ok=True)
    with (shared / "conform-self.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "result.json").exists():
            _produce(out)
    return _read(out)
