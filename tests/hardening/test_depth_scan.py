"""The depth scan over raw frontmatter text (engine/document/bounds.py) against the parser itself:
whatever it refuses the parser refuses too, and on a flow document that parses it finds exactly the
depth, and the line, the composer finds."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.document.bounds import MAX_DEPTH, refusal
from engine.document.parse import parse_yaml
from tests.hardening.documents import YAMLISH, mutated

PLAIN_CHARS = "abz09-_:?#'\"*&!|>%@`.=+é"
GAPS = st.sampled_from(["", " ", "  ", "\n", "\n  ", "\t", " # a comment ] } [\n", "\r\n", " \n\n "])


@st.composite
def scalar(draw: st.DrawFn, *, tricky: bool = True) -> str:
    """A flow scalar; `tricky` ones may be aliases to no anchor or plain text the parser refuses."""
    kinds = ["plain", "single", "double", "tagged"] + (["alias"] if tricky else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "single":
        return "'" + draw(st.text("ab ]}[{,#\"'\n", max_size=8)).replace("'", "''") + "'"
    if kind == "double":
        return (
            '"'
            + draw(st.text("ab ]}[{,#'\n\\\"", max_size=8)).replace("\\", "\\\\").replace('"', '\\"')
            + '"'
        )
    if kind == "alias":
        return "*" + draw(st.text("abc", min_size=1, max_size=3))
    if kind == "tagged":
        return "!!str " + draw(st.text("abc", min_size=1, max_size=3))
    if not tricky:
        return draw(st.sampled_from(["a", "b c", "a#b", "x:y", "a-b", "é 1"]))
    first = draw(st.sampled_from("abcXYZ019é-:"))
    return first + draw(st.text(PLAIN_CHARS + " ", max_size=8)).rstrip()


def node(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return scalar()
    inner = st.deferred(lambda: node(depth - 1))
    return st.one_of(scalar(), collection(inner))


@st.composite
def collection(draw: st.DrawFn, inner: st.SearchStrategy[str]) -> str:
    mapping = draw(st.booleans())
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        item = draw(inner)
        if mapping:
            item = draw(scalar()) + draw(st.sampled_from([": ", ":", " : ", ":\n"])) + item
        parts.append(item + draw(GAPS))
    opener, closer = ("{", "}") if mapping else ("[", "]")
    return opener + draw(GAPS) + ("," + draw(GAPS)).join(parts) + closer


@st.composite
def deep(draw: st.DrawFn) -> str:
    """A flow document around 64 levels deep, each level a collection with siblings before its child."""
    levels = draw(st.integers(MAX_DEPTH - 2, MAX_DEPTH + 3))
    text = draw(scalar(tricky=False)) if draw(st.booleans()) else "[]"
    for _ in range(levels - 1):
        siblings = [
            draw(scalar(tricky=False) | st.just("[a, {b: c}]")) for _ in range(draw(st.integers(0, 2)))
        ]
        if draw(st.booleans()):
            text = "[" + draw(GAPS) + "".join(f"{s},{draw(GAPS)}" for s in siblings) + text + draw(GAPS) + "]"
        else:
            pairs = "".join(f"k{i}: {s}, " for i, s in enumerate(siblings))
            text = "{" + draw(GAPS) + pairs + "deeper: " + text + draw(GAPS) + "}"
    return text


@st.composite
def noisy(draw: st.DrawFn, documents: st.SearchStrategy[str]) -> str:
    text = draw(documents)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(YAMLISH, min_size=1, max_size=3)) + text[at:]
    return text


def parsed_without_the_scan(text: str) -> tuple[Any, list[str]]:
    with mock.patch("engine.document.parse.refusal", return_value=None):
        value, issues = parse_yaml(text)
    return value, [str(issue) for issue in issues]


def refused_as_the_parser_refuses(text: str) -> None:
    found = refusal(text)
    if found is None:
        return
    value, issues = parsed_without_the_scan(text)
    assert value is None
    assert issues[0] == str(found) or issues[0].startswith("YAML syntax error"), (text, issues, found)


@settings(max_examples=300)
@given(deep())
def test_on_a_flow_document_the_scan_finds_the_depth_and_the_line_the_composer_finds(text: str) -> None:
    found = refusal(text)
    deeper = [issue for issue in parsed_without_the_scan(text)[1] if "nests deeper" in issue]
    assert ([] if found is None else [str(found)]) == deeper


@settings(max_examples=300)
@given(noisy(deep()) | noisy(node(4)) | node(6))
def test_what_the_scan_refuses_the_parser_refuses(text: str) -> None:
    refused_as_the_parser_refuses(text)


@settings(max_examples=200)
@given(mutated())
def test_a_real_document_edited_is_refused_only_as_the_parser_refuses_it(text: str) -> None:
    frontmatter = text.split("\n---", 1)[0].removeprefix("---\n")
    refused_as_the_parser_refuses(frontmatter)
