"""The arguments group's cases, against the published schemas of the tools they are sent to."""

from __future__ import annotations

import json

from conform.checks.arguments import CASES, TOOLS
from tests.support.schemas import SCHEMAS, validator


def test_every_argument_case_breaks_the_published_schema() -> None:
    """The arguments group sends each case expecting `invalid`: each must really break the schema."""
    context = {"run": "r_1", "item": "w_1", "snapshot": "s", "token": "t"}
    index = json.loads((SCHEMAS / "index.json").read_text())
    assert sorted(TOOLS) == sorted(index["tools"])
    valid = [
        f"{tool}: {why}"
        for tool, why, build in CASES
        if validator(index["tools"][tool]["arguments"]).is_valid(build(context))
    ]
    assert valid == []
