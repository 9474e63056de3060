"""The parse work a frontmatter can cause is bounded before any tree is built (issue: a 256 KiB flow
list took seconds to refuse because the node cap was applied after parsing everything).

The bound is tested by counting the events the YAML parser hands out, never by timing; the time is
shown by bench/document_bounds.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ruamel.yaml.parser import Parser

from engine.document import load
from engine.document.parse import MAX_EVENTS, MAX_FRONTMATTER_BYTES, parse_yaml

TOO_MANY = f"frontmatter has more than {MAX_EVENTS} YAML events; a process is a page of instructions"


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many events the YAML parser handed out, counted at the parser itself."""
    counted = [0]
    original = Parser.get_event

    def counting(self: Parser) -> Any:
        counted[0] += 1
        return original(self)

    monkeypatch.setattr(Parser, "get_event", counting)
    yield counted


def flow_list(items: int) -> str:
    """`x: [a, a, ...]`: the parser hands out `items` + 8 events (the stream's start; the document's,
    the mapping's and the sequence's start and end; the key); the stream's end is only looked at."""
    return "x: [" + ",".join(["a"] * items) + "]\n"


def test_a_long_flow_list_under_the_size_cap_is_refused_after_at_most_the_event_cap(
    events: list[int],
) -> None:
    text = flow_list(125_000)
    assert len(text) < MAX_FRONTMATTER_BYTES

    value, issues = parse_yaml(text)

    assert (value, [str(i) for i in issues]) == (None, [TOO_MANY])
    assert events[0] == MAX_EVENTS


def test_a_document_at_the_event_cap_is_read_whole(events: list[int]) -> None:
    value, issues = parse_yaml(flow_list(MAX_EVENTS - 8))

    assert issues == []
    assert value == {"x": ["a"] * (MAX_EVENTS - 8)}
    assert events[0] == MAX_EVENTS


def test_one_event_more_is_refused(events: list[int]) -> None:
    value, issues = parse_yaml(flow_list(MAX_EVENTS - 7))

    assert (value, [str(i) for i in issues]) == (None, [TOO_MANY])
    assert events[0] == MAX_EVENTS


def test_many_block_keys_are_bounded_the_same_way(events: list[int]) -> None:
    text = "x:\n" + "".join(f"  k{i}: v\n" for i in range(20_000))
    assert len(text) < MAX_FRONTMATTER_BYTES

    assert [str(i) for i in parse_yaml(text)[1]] == [TOO_MANY]
    assert events[0] == MAX_EVENTS


def test_the_whole_document_path_reports_the_bound(events: list[int]) -> None:
    loaded = load("---\n" + flow_list(125_000) + "---\nbody\n")

    assert [str(i) for i in loaded.issues] == [TOO_MANY]
    assert events[0] == MAX_EVENTS
