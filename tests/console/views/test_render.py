"""Wire shapes as readable lines: instructions, a step's output, lines wrapped under their indent."""

from __future__ import annotations

from rich.console import Console

from console.client.wire import StepRecord
from console.views.palette import Palette
from console.views.render import Hanging, record_lines, reflowed


def test_instructions_lose_their_source_line_breaks_but_keep_paragraphs_and_lists() -> None:
    source = "Approve when the spend has budget, the\nvendor is active.\n\n- one item\n  indented\n- two\n# Notes\nText"
    assert reflowed(source) == (
        "Approve when the spend has budget, the vendor is active.\n\n- one item\n  indented\n- two\n# Notes\nText"
    )


def test_a_steps_output_shows_objects_as_pairs_and_lists_of_objects_one_row_each() -> None:
    record: StepRecord = {
        "by": "agent-cy",
        "at": "2026-12-03T20:42:00Z",
        "output": {
            "totalAccounts": 280,
            "owner": {"name": "Sam", "team": "IT"},
            "flaggedAccounts": [{"user": "ana@example.com", "reason": "admin"}, {"user": "tom@example.com"}],
        },
    }
    assert [text for text, _ in record_lines(record, Palette(), "  ")] == [
        "  done by agent-cy at 2026-12-03 20:42",
        "  output",
        "    totalAccounts: 280",
        "    owner: name: Sam · team: IT",
        "    flaggedAccounts: 2 items",
        "                     1. user: ana@example.com · reason: admin",
        "                     2. user: tom@example.com",
    ]


def test_an_indented_line_wraps_under_its_own_indent_and_prose_from_the_edge() -> None:
    lines = [
        ("Approve refunds over 100 when the verdict is right", "bold"),
        ("    decisionSummary: refund 258.55 of the 319.60 order 13386 (wrong_item)", ""),
        ("  short", ""),
        ("                  deep: a value that would hang past half the width", ""),
    ]
    console = Console(width=36, record=True)
    console.print(Hanging(lines))
    assert [line.rstrip() for line in console.export_text().splitlines()] == [
        "Approve refunds over 100 when the",
        "verdict is right",
        "    decisionSummary: refund 258.55",
        "      of the 319.60 order 13386",
        "      (wrong_item)",
        "  short",
        "                  deep: a value that",
        "would hang past half the width",
    ]
    assert str(Hanging(lines)) == "\n".join(text for text, _ in lines)
