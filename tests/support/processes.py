"""Process folders written for a test: one `PROCESS.md` each, in a folder named after the process; and
`SCREENING`, the process the engine and console tests run most (bind `finance-approver` to a group)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

from engine.core import Engine


def write_process(root: Path, text: str) -> Path:
    """`text` (indented as it sits in the test) as `<root>/<name>/PROCESS.md`; the folder is returned."""
    text = textwrap.dedent(text).lstrip("\n")
    name = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:"))
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PROCESS.md").write_text(text)
    return folder


async def publish(engine: Engine, root: Path, text: str, bind: Mapping[str, str] | None = None) -> str:
    """Write `text` under `<root>/processes` and publish it, asserting it is accepted; its name is returned."""
    folder = write_process(root / "processes", text)
    result = await engine.publish(folder, dict(bind or {}))
    assert result.ok, result.issues
    return folder.name


SCREENING = """
---
name: screening
description: Screen a vendor and get finance approval.
inputs:
  vendorName: string
  amount: { type: number, optional: true }
steps:
  - id: check_vendor
    agent: Check the vendor against the sanctions lists. Attach the report.
    output:
      cleared: boolean
      summary: string
    evidence: [file]
    next:
      - { to: approve, when: Vendor is cleared }
      - { to: decline, when: Any hit }
  - id: approve
    person: finance-approver
    approve: Approve when the vendor is cleared and the spend is justified.
    due: 2d
    on_reject: check_vendor
    next: done
  - id: decline
    finish: declined
  - id: done
    finish: onboarded
---

# Screening

The agent screens the vendor; finance approves.
"""
