"""The parse work a frontmatter can cause is bounded before any tree is built (issue: a 256 KiB flow
list took seconds to refuse because the node cap was applied after parsing everything), and the
shapes found slow to refuse (a document nested 70 levels deep, one with a 140 KB value) are refused
before any parsing (engine/document/bounds.py).

The event bound is tested by counting the events the YAML parser hands out; the two shapes by their
time as a ratio to a fixture's load measured in the same test, never by an absolute time.
bench/document_bounds.py shows the times.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from ruamel.yaml.parser import Parser

from engine.document import load
from engine.document.bounds import MAX_FRONTMATTER_BYTES
from engine.document.parse import MAX_EVENTS, parse_yaml
from tests.support.schemas import SPEC

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
    text = flow_list(30_000)
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
    text = "x:\n" + "".join(f"  k{i}: v\n" for i in range(6_000))
    assert len(text) < MAX_FRONTMATTER_BYTES

    assert [str(i) for i in parse_yaml(text)[1]] == [TOO_MANY]
    assert events[0] == MAX_EVENTS


def test_the_whole_document_path_reports_the_bound(events: list[int]) -> None:
    loaded = load("---\n" + flow_list(30_000) + "---\nbody\n")

    assert [str(i) for i in loaded.issues] == [TOO_MANY]
    assert events[0] == MAX_EVENTS


FIXTURE = SPEC / "conformance" / "fixtures" / "expense-reimbursement" / "PROCESS.md"
TYPICAL_LOADS = 25
"""How many loads of a typical fixture the worst document may cost (issue 34)."""


def nested_json(levels: int = 70) -> str:
    """A JSON document nested `levels` deep, one level a line: 3.6 KB at 70."""
    inner = "".join(" " * i + '{"a": "b", "c":\n' for i in range(levels))
    return '---\n{"name": "deep", "k":\n' + inner + "1" + "}" * levels + "}\n---\n"


def nested_block(levels: int = 70) -> str:
    """The same depth in block style, each level a key with a sibling before it."""
    inner = "".join(" " * i + f"sibling{i}: x\n" + " " * i + f"key{i}:\n" for i in range(levels))
    return "---\nname: deep\n" + inner + " " * levels + "v: 1\n---\n"


def one_huge_value(size: int = 140_000) -> str:
    return "---\nname: huge\ndescription: " + "word a:b c#d " * (size // 13) + "\n---\n"


def test_both_shapes_are_refused_with_the_issue_that_says_why() -> None:
    assert len(nested_json().encode()) == 3_638 and len(one_huge_value()) > 140_000
    assert [str(i) for i in load(nested_json()).issues] == [
        "frontmatter nests deeper than 64 levels (line 65)"
    ]
    assert [str(i) for i in load(nested_block()).issues] == [
        "frontmatter nests deeper than 64 levels (line 129)"
    ]
    assert [str(i) for i in load(one_huge_value()).issues] == ["frontmatter is larger than 64 KiB"]


def test_the_slow_shapes_cost_fewer_than_25_loads_of_a_typical_fixture() -> None:
    """Best of several interleaved rounds each, so a busy machine slows all of them alike."""
    texts = {"fixture": FIXTURE.read_text(encoding="utf-8"), "nested json": nested_json()}
    texts |= {"nested block": nested_block(), "one huge value": one_huge_value()}
    assert load(texts["fixture"]).ok
    timings: dict[str, list[float]] = {name: [] for name in texts}
    for _ in range(7):
        for name, text in texts.items():
            started = time.perf_counter()
            load(text)
            timings[name].append(time.perf_counter() - started)
    typical = min(timings.pop("fixture"))
    ratios = {name: min(times) / typical for name, times in timings.items()}
    assert [name for name, ratio in ratios.items() if ratio >= TYPICAL_LOADS] == [], ratios
