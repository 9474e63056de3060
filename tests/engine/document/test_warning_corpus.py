"""The warning corpus: documents spec §2 does not refuse but whose author almost surely meant otherwise.

Each file in tests/engine/document/warnings/ is valid (it loads, hashes and would publish) and lists in
its body every warning the validator must report, exactly and in order. A refusal stays only where a spec
sentence or the shared schema demands it; these cases were refusals before and are warnings now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.document import load

CORPUS = Path(__file__).parent / "warnings"
CASES = sorted(CORPUS.glob("*.md"))


def expected_warnings(text: str) -> list[str]:
    listed = text.split("\nWarnings:\n", 1)[1]
    return [line.removeprefix("- ") for line in listed.splitlines() if line.startswith("- ")]


def test_the_corpus_holds_every_case() -> None:
    assert [case.stem for case in CASES] == [
        "agent-blank",
        "approve-blank",
        "description-blank",
        "evidence-twice",
        "on-timeout-without-timeout",
        "route-twice",
        "several-warnings",
        "when-blank",
    ]


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_each_document_is_valid_and_reports_exactly_its_warnings(case: Path) -> None:
    text = case.read_text(encoding="utf-8")

    loaded = load(text)

    assert loaded.issues == ()
    assert loaded.process is not None
    assert loaded.content_hash is not None
    assert [str(warning) for warning in loaded.warnings] == expected_warnings(text)


def test_a_repeated_evidence_kind_is_asked_for_once() -> None:
    loaded = load((CORPUS / "several-warnings.md").read_text(encoding="utf-8"))
    assert loaded.process is not None
    assert loaded.process.step("work").evidence == ("file", "link")


def test_an_invalid_document_reports_its_warnings_beside_its_issues() -> None:
    text = (CORPUS / "evidence-twice.md").read_text(encoding="utf-8").replace("name: demo", "name: Demo")
    loaded = load(text)
    assert [str(i) for i in loaded.issues] == ["name: 'Demo' must match ^[a-z0-9]+(-[a-z0-9]+)*$"]
    assert [str(w) for w in loaded.warnings] == ["steps.work.evidence[1]: 'link' is listed twice"]
