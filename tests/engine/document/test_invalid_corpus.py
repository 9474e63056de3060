"""The invalid-document corpus: one PROCESS.md per refusal rule of spec §2 and of both profiles.

Each file in tests/engine/document/invalid/ carries its own expectation in its body: the offender its
first issue must name, then every issue the validator must report, exactly and in order.
`apc validate tests/engine/document/invalid/*.md` shows the same lines.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.document import load

CORPUS = Path(__file__).parent / "invalid"
CASES = sorted(CORPUS.glob("*.md"))

_OFFENDER = re.compile(r"^Offender: `(.+)`$", re.MULTILINE)


def expectation(text: str) -> tuple[str, list[str]]:
    body = text.split("\n---\n", 1)[1]
    offender = _OFFENDER.search(body)
    assert offender is not None, "a corpus file names its offender"
    issues = body.split("\nIssues:\n", 1)[1]
    return offender.group(1), [
        line.removeprefix("- ") for line in issues.splitlines() if line.startswith("- ")
    ]


def test_the_corpus_holds_every_case() -> None:
    assert len(CASES) == 136


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_each_invalid_document_reports_exactly_its_issues(case: Path) -> None:
    text = case.read_text(encoding="utf-8")
    offender, expected = expectation(text)

    loaded = load(text)

    assert [str(issue) for issue in loaded.issues] == expected
    assert offender in str(loaded.issues[0])
    assert loaded.process is None
    assert loaded.content_hash is None


def test_a_document_with_many_problems_reports_every_one_at_once() -> None:
    loaded = load((CORPUS / "many-problems.md").read_text(encoding="utf-8"))

    assert [issue.path for issue in loaded.issues] == [
        "emails",
        "name",
        "description",
        "inputs.amount.type",
        "requires.systems[1]",
        "steps[2].id",
        "steps.intake.evidence[0]",
        "steps.intake.next",
        "steps.intake.due",
        "steps[1].output",
        "steps[1].next",
        "steps[1].person",
        "steps.hold.wait_for",
        "steps.hold.on_timeout",
        "steps.done.next",
    ]
    assert loaded.name == "Many_Problems"


@pytest.mark.parametrize(
    ("case", "path", "message"),
    [
        ("next-unknown-step", "steps.approve.next", "unknown step 'aprove'"),
        (
            "step-index-path",
            "steps[0].person",
            "not allowed on an agent step (person applies to task and approve steps)",
        ),
        (
            "requires-system-name",
            "requires.systems[1]",
            "'Sales Force' must match ^[a-z0-9]+(-[a-z0-9]+)*$ with at most 64 characters",
        ),
        (
            "input-unknown-type",
            "inputs.amount.type",
            "unknown type 'money'; the types are string, number, boolean, date, datetime, list, object, person",
        ),
    ],
)
def test_paths_follow_the_documented_forms(case: str, path: str, message: str) -> None:
    loaded = load((CORPUS / f"{case}.md").read_text(encoding="utf-8"))

    assert (loaded.issues[-1].path, loaded.issues[-1].message) == (path, message)
