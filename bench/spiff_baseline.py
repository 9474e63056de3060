"""SpiffWorkflow's durable transitions per second, for `engine_throughput.py` to set beside ours.

A workflow of three sequential tasks (Spiff's own spec API, no BPMN parsing in the loop); after every
task it runs, the whole workflow is serialised with Spiff's JSON serializer and written to SQLite in
the mode our store uses (WAL, synchronous=FULL, one autocommit statement, so one commit, per
transition). SpiffWorkflow is a bench-only install (`pip install -e '.[bench]'`), never a dependency
of the engine: without it the figure is skipped and the reason printed.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

SETTINGS = (
    "SpiffWorkflow {version}, 3 sequential Simple tasks per workflow, in-memory workflow serialised "
    "with JSONSerializer after every task, INSERT OR REPLACE in sqlite3 autocommit, WAL, synchronous=FULL"
)


def transitions_per_second(path: Path, workflows: int) -> tuple[float, str] | str:
    """Durable transitions/s over `workflows` workflows and the settings, or why it could not be measured."""
    try:
        from SpiffWorkflow.serializer.json import JSONSerializer
        from SpiffWorkflow.specs.Simple import Simple
        from SpiffWorkflow.specs.WorkflowSpec import WorkflowSpec
        from SpiffWorkflow.version import __version__
        from SpiffWorkflow.workflow import Workflow
    except ImportError as exc:
        return f"SpiffWorkflow is not installed: {exc}; pip install -e '.[bench]'"
    spec = WorkflowSpec("three-steps", addstart=True)
    previous = spec.start
    for name in ("one", "two", "three"):
        task = Simple(spec, name)
        previous.connect(task)
        previous = task
    serializer = JSONSerializer()
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE workflows (id INTEGER PRIMARY KEY, state TEXT NOT NULL)")
        transitions = 0
        started = time.perf_counter()
        for n in range(workflows):
            workflow = Workflow(spec)
            while workflow.run_next(halt_on_manual=False):
                state = workflow.serialize(serializer)
                db.execute("INSERT OR REPLACE INTO workflows (id, state) VALUES (?, ?)", (n, state))
                transitions += 1
        elapsed = time.perf_counter() - started
    finally:
        db.close()
    return transitions / elapsed, SETTINGS.format(version=__version__)
