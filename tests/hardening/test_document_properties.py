"""Property tests of the PROCESS.md library (engine/document): whatever the text, loading never raises,
gives the same answer twice, and stops within the parser-event cap; a valid process hashes the same
however its frontmatter is laid out, and publishing stores and hashes exactly that text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml.parser import Parser

from engine.clock import ManualClock
from engine.core import Engine
from engine.document import Loaded, load
from engine.document.parse import MAX_EVENTS
from engine.org import OrgConfig
from tests.hardening.documents import YAMLISH, mutated, processes, written


@contextmanager
def counted_events() -> Iterator[list[int]]:
    count = [0]
    original = Parser.get_event

    def counting(self: Parser) -> Any:
        count[0] += 1
        return original(self)

    with mock.patch.object(Parser, "get_event", counting):
        yield count


def summary(loaded: Loaded) -> tuple[Any, ...]:
    return (loaded.name, loaded.issues, loaded.warnings, loaded.content_hash, loaded.profiles, loaded.text)


def holds_for_any_text(text: str) -> None:
    with counted_events() as events:
        first = load(text)
    assert events[0] <= MAX_EVENTS
    assert summary(load(text)) == summary(first)
    assert (first.process is None) == bool(first.issues)
    assert (first.content_hash is None) == (first.process is None)
    if first.content_hash is not None:
        assert len(first.content_hash) == 64 and int(first.content_hash, 16) >= 0
    assert all(isinstance(i.path, str) and i.message for i in (*first.issues, *first.warnings))


@settings(max_examples=400)
@given(mutated())
def test_any_edit_of_a_real_document_loads_without_raising_the_same_way_twice(text: str) -> None:
    holds_for_any_text(text)


@settings(max_examples=300)
@given(st.text(YAMLISH, max_size=200).map(lambda s: f"---\n{s}\n---\nbody\n"))
def test_arbitrary_frontmatter_text_loads_without_raising(text: str) -> None:
    holds_for_any_text(text)


@pytest.mark.soak
@settings(max_examples=20_000, derandomize=False)
@given(mutated() | st.text(YAMLISH, max_size=400).map(lambda s: f"---\n{s}\n---\n"))
def test_many_edits_load_without_raising(text: str) -> None:
    holds_for_any_text(text)


def bindings(frontmatter: dict[str, Any]) -> dict[str, str]:
    roles = {s["person"] for s in frontmatter["steps"] if "person" in s}
    return {role: "g_all" for role in roles}


def publishes_as_written(
    runner: asyncio.Runner, engine: Engine, root: Path, text: str, loaded: Loaded
) -> None:
    assert loaded.name is not None
    folder = root / loaded.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PROCESS.md").write_bytes(text.encode("utf-8"))
    assert loaded.process is not None
    roles = {role: "g_all" for role in loaded.process.roles}
    result = runner.run(engine.publish(folder, roles))
    assert result.ok, result.issues
    assert result.version is not None
    record = runner.run(engine.store.get_version(loaded.name, result.version))
    assert record is not None
    assert record.content_hash == loaded.content_hash
    # A new version keeps this very text; an equal hash (another layout) keeps the version it names.
    assert record.text == text if result.created else load(record.text).content_hash == record.content_hash


def check_layouts(tmp_path: Path, examples: int, derandomize: bool) -> None:
    org = OrgConfig.build(groups={"g_all": ["a@example.com"]})
    with asyncio.Runner() as runner:
        engine = runner.run(Engine.open(tmp_path / "data", org, clock=ManualClock()))
        try:

            @settings(max_examples=examples, derandomize=derandomize)
            @given(st.data(), processes())
            def hashes_the_same(data: st.DataObject, process: tuple[dict[str, Any], str]) -> None:
                frontmatter, body = process
                one = data.draw(written(frontmatter, body))
                other = data.draw(written(frontmatter, body))
                first, second = load(one), load(other)
                assert first.issues == (), (one, first.issues)
                assert second.issues == (), (other, second.issues)
                assert first.content_hash == second.content_hash
                assert first.process is not None and first.process.frontmatter == frontmatter
                publishes_as_written(runner, engine, tmp_path / "published", one, first)

            hashes_the_same()
        finally:
            runner.run(engine.close())


def test_a_valid_process_hashes_the_same_in_any_layout_and_publishes_as_written(tmp_path: Path) -> None:
    check_layouts(tmp_path, examples=80, derandomize=True)


@pytest.mark.soak
def test_many_valid_processes_hash_the_same_in_any_layout(tmp_path: Path) -> None:
    check_layouts(tmp_path, examples=3000, derandomize=False)
