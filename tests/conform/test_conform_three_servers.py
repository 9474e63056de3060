"""`apc conform` against three `apc serve` processes on one PostgreSQL database, its calls spread over
them round-robin (`--server` three times): every check passes, as against one server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conform.setup import DEFAULT_SPEED, write_setup
from tests.hardening.serve_support import launch_serve, wait_serving

RUN_TIMEOUT_SECONDS = 400


@pytest.mark.soak  # about 3 minutes alone, and on a loaded machine the runner itself may time out
def test_every_check_passes_against_three_servers_on_one_database(tmp_path: Path, pg_database: str) -> None:
    files = write_setup(tmp_path / "setup", DEFAULT_SPEED)
    org = files.org.read_text()
    # One secrets file and one files folder for the three, as "Running at scale" says.
    files.org.write_text(
        org.replace("[server]\n", "[server]\nsecrets_file = 'secrets.key'\nfiles = 'files'\n", 1)
    )
    launched = [
        launch_serve(
            files.org,
            tmp_path / f"data{n}",
            tmp_path / f"serve{n}.log",
            speed=DEFAULT_SPEED,
            extra=["--database", pg_database],
        )
        for n in range(3)
    ]
    try:
        servers = [wait_serving(s) for s in launched]
        command = [
            sys.executable, "-c", "import sys; from apc.cli import main; sys.exit(main())",
            "conform", "--config", str(files.conform), "--json", str(tmp_path / "report.json"),
            *(arg for s in servers for arg in ("--server", s.url)),
        ]  # fmt: skip
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS, check=False
        )
    finally:
        for served in launched:
            if served.process.poll() is None:
                served.stop()
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert (done.returncode, failed, done.stderr) == (0, [], "")
    report = json.loads((tmp_path / "report.json").read_text())
    statuses = {check["status"] for check in report["checks"]}
    assert statuses == {"PASS"}, sorted(
        (c["id"], c["status"]) for c in report["checks"] if c["status"] != "PASS"
    )
