"""Text that is not Unicode never enters: a lone surrogate (only an embedded caller can hand one over;
JSON parsers refuse it) is `invalid`, naming where, rather than an error inside the store (`retry`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.core import Engine
from engine.identity import Identity
from tests.engine.engine_support import MIRA, SCREENER, THREE_AGENTS, call, err, publish

pytestmark = pytest.mark.both_stores

LONE = "\ud800"
CASES = [
    (MIRA, "get_run", {"runId": LONE}, "runId"),
    (SCREENER, "claim", {"runId": f"r_{LONE}", "stepId": "one"}, "runId"),
    (MIRA, "start_run", {"process": LONE, "inputs": {}}, "process"),
    (MIRA, "start_run", {"process": "three-agents", "inputs": {"ticket": LONE}}, "inputs.ticket"),
    (MIRA, "start_run", {"process": "three-agents", "inputs": {LONE: "x"}}, "inputs"),
    (SCREENER, "renew", {"token": LONE}, "token"),
    (MIRA, "list_runs", {"process": LONE}, "process"),
    (MIRA, "list_runs", {"inputs": {"ticket": [LONE]}}, "inputs.ticket[0]"),
    (MIRA, "get_work", {"process": LONE}, "process"),
]


@pytest.mark.parametrize(("who", "tool", "arguments", "path"), CASES, ids=[f"{c[1]}-{c[3]}" for c in CASES])
async def test_a_lone_surrogate_is_invalid_naming_where(
    engine: Engine, tmp_path: Path, who: Identity, tool: str, arguments: dict[str, object], path: str
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    err(await call(engine, who, tool, **arguments), "invalid", [f"{path}: not valid Unicode text"])
