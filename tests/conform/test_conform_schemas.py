"""The runner's own JSON Schemas (conform/schemas/, written from tools.md) accept and refuse the same
documents as the spec's published schemas: every answer of a whole `apc conform --self` run, and
documents mutated from them at every level (a key removed or added, a value of another type, an
empty string or list, an enum value that is not one), each judged by both."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conform import contracts
from tests.conform.conform_support import SelfRun
from tests.support.schemas import SCHEMAS, validator

OWN = contracts.load()
TOOLS = sorted(json.loads((SCHEMAS / "index.json").read_text())["tools"])
REPLACEMENTS: list[Any] = [None, 7, 1.5, "x", "", True, [], {}, [7], {"x": 1}]
VIEW_TOOLS = ("start_run", "get_run", "submit", "decide", "escalate", "cancel")
"""Tools whose result is the run view: one schema, so their answers are mutated together."""


def _pair(kind: str) -> tuple[Draft202012Validator, Draft202012Validator]:
    if kind == "error":
        return validator("tool-error.json"), OWN.error
    return validator(f"tools/{kind}.result.json"), OWN.results[kind]


@pytest.fixture(scope="module")
def corpus(self_run: SelfRun) -> dict[str, list[Any]]:
    """Every distinct answer of the run by kind: a tool's result, or `error`."""
    found: dict[str, dict[str, Any]] = {}
    for entry in self_run.trace:
        answer = entry["answer"]
        kind, document = (entry["tool"], answer["data"]) if answer["ok"] else ("error", answer["error"])
        found.setdefault(kind, {})[json.dumps(document, sort_keys=True)] = document
    return {kind: list(documents.values()) for kind, documents in found.items()}


MAPS = ("inputs", "output", "steps")
"""Objects keyed by names the document chooses (fields, step ids): one schema location for every key."""


def _location(path: tuple[Any, ...], node: Any) -> tuple[str, str]:
    """Where in the schema a node sits: list indices and map keys stand for all of their kind."""
    parts = []
    for index, part in enumerate(path):
        parent = path[index - 1] if index else None
        parts.append("*" if isinstance(part, int) or parent in MAPS else str(part))
    return "/".join(parts), type(node).__name__


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _nodes(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _nodes(inner, (*path, index))


def _set(document: Any, path: tuple[Any, ...], change: Any) -> Any:
    """A copy of `document` with the node at `path` changed by `change(node) -> new node`."""
    copied = copy.deepcopy(document)
    if not path:
        return change(copied)
    parent = copied
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = change(parent[path[-1]])
    return copied


def _drop(key: str) -> Any:
    return lambda node: {k: v for k, v in node.items() if k != key}


def _mutations(documents: list[Any]) -> Iterator[tuple[str, Any]]:
    """Every change below at every schema location the documents reach, each on its first example."""
    seen: set[tuple[str, str]] = set()
    for document in documents:
        for path, node in _nodes(document):
            location = _location(path, node)
            if location in seen:
                continue
            seen.add(location)
            where = location[0] or "(root)"
            changes: list[tuple[str, Any]] = []
            if isinstance(node, dict):
                changes += [(f"without {key}", _drop(key)) for key in node]
                changes.append(("with an unknown key", lambda n: {**n, "conformExtra": 1}))
            if isinstance(node, list) and node:
                changes.append(("another item of another type", lambda n: [*n, 7]))
            if isinstance(node, str):
                changes.append(("not an enum value", lambda n: n + "-not-a-value"))
            changes += [(json.dumps(r), lambda n, r=r: copy.deepcopy(r)) for r in REPLACEMENTS]
            for label, change in changes:
                yield f"{where} {label}", _set(document, path, change)


def test_both_accept_every_answer_of_a_whole_run(corpus: dict[str, list[Any]]) -> None:
    assert set(corpus) == {*TOOLS, "error"}
    wrong = []
    for kind, documents in corpus.items():
        published, own = _pair(kind)
        for document in documents:
            if not (published.is_valid(document) and own.is_valid(document)):
                wrong.append((kind, published.is_valid(document), own.is_valid(document)))
    assert wrong == []


def test_both_refuse_and_accept_the_same_mutated_documents(corpus: dict[str, list[Any]]) -> None:
    disagreements: list[str] = []
    refused = total = 0
    kinds = {kind: documents for kind, documents in corpus.items() if kind not in VIEW_TOOLS}
    kinds["get_run"] = [document for tool in VIEW_TOOLS for document in corpus[tool]]
    for kind, documents in sorted(kinds.items()):
        published, own = _pair(kind)
        for label, mutated in _mutations(documents):
            total += 1
            verdicts = (published.is_valid(mutated), own.is_valid(mutated))
            refused += not verdicts[0]
            if verdicts[0] != verdicts[1]:
                disagreements.append(f"{kind} {label}: published {verdicts[0]}, own {verdicts[1]}")
    assert disagreements == []
    assert total > 3000
    assert refused > total // 2


@pytest.mark.parametrize(
    ("change", "accepted"),
    [
        ({"replayed": True}, True),
        ({"replayed": False}, False),
        ({"layout": {"draft": {"x": 1, "y": 2.5}}}, True),
        ({"layout": {"draft": {"x": 1}}}, False),
    ],
)
def test_what_the_published_run_view_allows_beyond_tools_md(
    corpus: dict[str, list[Any]], change: dict[str, Any], accepted: bool
) -> None:
    """The published run view allows `replayed` (only true) and `layout`; tools.md is silent on both,
    and the runner's schema follows the published one there."""
    view = corpus["get_run"][0]
    published, own = _pair("get_run")
    assert (published.is_valid({**view, **change}), own.is_valid({**view, **change})) == (accepted, accepted)


def test_schemas_dir_loads_the_published_files() -> None:
    """`--schemas DIR` reads the spec's own folder with the same loader."""
    published = contracts.load(SCHEMAS)
    assert published.source == str(SCHEMAS)
    assert sorted(published.results) == TOOLS == sorted(OWN.results)
    assert published.problems("renew", {"ok": True, "data": {"token": "t", "expiresAt": "x"}}) == []
    assert published.problems("renew", {"ok": True, "data": {"token": "t"}}) == [
        "data: 'expiresAt' is a required property"
    ]
    assert published.problems("renew", {"ok": False, "error": {"code": "nope", "message": "m"}}) == [
        "error/code: 'nope' is not one of ['invalid', 'not_accepted', 'stale', 'conflict', 'forbidden', 'not_found', 'retry']"
    ]
    assert OWN.problems("renew", {"ok": False, "error": {"code": "stale", "message": " "}}) == [
        "error/message: blank"
    ]
    assert OWN.problems("renew", {"ok": True, "data": {}, "extra": 1}) == [
        "a success envelope has keys ['data', 'extra', 'ok'], expected ok and data"
    ]
