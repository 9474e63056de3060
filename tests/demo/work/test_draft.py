"""Drafting a step's work, leaving something out on purpose, and repairing it from the server's issues."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

from demo.work.draft import TEST_NOTE, Draft, Where, draft, evidence_items, incomplete, repair, summary
from engine.document.fields import check_values
from tests.demo.demo_support import NOW, scene

STEP: dict[str, Any] = {
    "id": "assess",
    "instructions": "Assess the request. Attach the report and link the record.",
    "output": {
        "eligible": "boolean",
        "approvedAmount": "number",
        "notes": {"type": "string", "optional": True},
    },
    "evidence": ["file", "link"],
    "next": [
        {"to": "accept", "when": "Eligible and 100 or less"},
        {"to": "decline", "when": "Not eligible under the policy"},
    ],
}
WHERE = Where("review", "r_1", "assess", "agent-a", "live")


def drafted(seed: int, requirements: dict[str, Any] = STEP) -> Draft:
    return draft(requirements, random.Random(seed), scene(seed=f"{seed}:r_1"), step_id="assess")


def test_a_draft_satisfies_the_declared_fields_and_agrees_with_its_route() -> None:
    for seed in range(20):
        work = drafted(seed)
        assert check_values(work.fields, work.output, "output") == []
        assert work.evidence == ("file", "link")
        assert work.choice is not None
        assert work.output["eligible"] is (work.choice.to == "accept")
        if work.choice.to == "accept":
            assert work.output["approvedAmount"] <= 100


def test_incomplete_leaves_out_exactly_one_thing() -> None:
    work = drafted(1)
    seen = set()
    for seed in range(40):
        broken, what = incomplete(work, random.Random(seed)) or (None, "")
        assert broken is not None
        seen.add(what)
        if what.startswith("output."):
            assert set(work.output) - set(broken.output) == {what.removeprefix("output.")}
        elif what == "evidence":
            assert (broken.evidence, broken.output, broken.choice) == ((), work.output, work.choice)
        else:
            assert (what, broken.choice, broken.output) == ("next", None, work.output)
    assert seen == {"output.eligible", "output.approvedAmount", "evidence", "next"}
    bare = drafted(0, {"id": "x", "output": None, "evidence": None, "next": None})
    assert incomplete(bare, random.Random(0)) is None


def test_repair_deals_with_every_issue_listed() -> None:
    work = drafted(2)
    broken = work.without("approvedAmount")
    broken = replace(broken, output={**broken.output, "extra": 1}, evidence=(), choice=None)
    issues = [
        "output.approvedAmount: missing",
        "output.extra: not declared",
        "evidence: file required",
        "evidence: link required",
        "next: required, one of accept, decline",
        "reason: required",
    ]
    fixed = repair(broken, issues, random.Random(3), ("file", "link"))
    assert check_values(fixed.fields, fixed.output, "output") == []
    assert "extra" not in fixed.output
    assert fixed.output["approvedAmount"] == work.output["approvedAmount"] or fixed.choice != work.choice, (
        "the missing amount is drafted again from the same facts (unless the new route bounds it)"
    )
    assert fixed.evidence == ("file", "link")
    assert fixed.choice is not None and fixed.choice.to in ("accept", "decline")


async def test_evidence_is_an_uploaded_json_report_and_a_record_link() -> None:
    work = drafted(4)
    uploads: list[tuple[str, str, bytes]] = []

    async def upload(name: str, content_type: str, content: bytes) -> str:
        uploads.append((name, content_type, content))
        return "f_1"

    items = await evidence_items(work, WHERE, upload, NOW)
    assert items == [
        {"kind": "file", "ref": "f_1"},
        {"kind": "link", "ref": "https://records.example.com/review/r_1/assess"},
    ]
    [(name, content_type, content)] = uploads
    assert (name, content_type) == ("assess-report.json", "application/json")
    assert json.loads(content) == {
        "process": "review",
        "run": "r_1",
        "step": "assess",
        "preparedBy": "agent-a",
        "preparedAt": "2026-10-06T09:00:00Z",
        "mode": "live",
        "findings": work.output,
        "route": work.choice.to if work.choice else None,
    }


def test_a_summary_says_what_was_done_the_route_and_a_test_run() -> None:
    work = drafted(5)
    assert work.choice is not None
    texts = {k: json.dumps(v) for k, v in list(work.output.items())[:3]}
    shown = ", ".join(f"{k} = {t if len(t) <= 40 else t[:39] + '…'}" for k, t in texts.items())
    live = summary(STEP["instructions"], work, "live", ["Handoff read."])
    assert live == f"Done: Assess the request. Recorded {shown}. {work.choice.reason} Handoff read."
    assert summary(STEP["instructions"], work, "test") == (
        f"Done: Assess the request. Recorded {shown}. {work.choice.reason} {TEST_NOTE}"
    )
