"""Reading a handoff: every part it may hold, a check's questions apart, and what an attempt says it did
about each."""

from __future__ import annotations

from demo.work.handoff import Handoff
from demo.work.revise import CheckLine

ASK = "The total matches the order."


def test_an_empty_or_missing_handoff_reads_as_nothing() -> None:
    assert Handoff.read(None) == Handoff() == Handoff.read({})
    assert Handoff().empty is True
    assert Handoff().acknowledgements() == []
    assert Handoff().resumed is False


def test_every_part_is_read_and_acknowledged() -> None:
    handoff = Handoff.read(
        {
            "progress": "Done 2 of 3 parts: Looked up the order.",
            "issues": ["output.total: missing", "evidence: link required", f"check: {ASK} → no (0.2)"],
            "returned": {"note": "Use the legal name.", "by": "op@example.com", "at": "2026-10-06T09:00:00Z"},
            "check": {
                "verdict": "fail",
                "advisory": False,
                "model": "m",
                "questions": [],
                "at": "2026-10-06T09:00:00Z",
            },
        }
    )
    assert handoff == Handoff(
        progress="Done 2 of 3 parts: Looked up the order.",
        issues=("output.total: missing", "evidence: link required", f"check: {ASK} → no (0.2)"),
        returned_note="Use the legal name.",
        returned_by="op@example.com",
        check_verdict="fail",
    )
    assert handoff.resumed is True
    assert handoff.check_lines == [CheckLine(ASK, "no (0.2)")]
    assert handoff.other_issues == ["output.total: missing", "evidence: link required"]
    assert handoff.acknowledgements() == [
        "Picked up after an expired lease from the note 'Done 2 of 3 parts: Looked up the order.' and did not redo that part.",
        "The previous submission was refused (output.total: missing; evidence: link required); this one fixes each issue.",
        "Returned by op@example.com with the note 'Use the legal name.'; followed it.",
    ], "the check's questions are acknowledged by the revision that answers them"


def test_parts_done_trusts_only_a_note_in_the_same_plan() -> None:
    assert Handoff(progress="Done 2 of 3 parts: x").parts_done(3) == 2
    assert Handoff(progress="Done 2 of 4 parts: x").parts_done(3) == 0
    assert Handoff(progress="Halfway through").parts_done(3) == 0
    assert Handoff().parts_done(3) == 0
