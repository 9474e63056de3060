"""Hypothesis strategies for PROCESS.md: mutations of real documents, and valid processes written out
in many YAML layouts.

The renderer writes the same frontmatter value in different ways (block or flow collections, plain,
single- or double-quoted strings, `0x`/`0o` integers, comments, LF or CRLF), so two renderings of one
value must give one content hash.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from engine.document.parse import resolve_plain

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO.parent / "shared" / "agentprocess"
SOURCES = [
    p.read_text(encoding="utf-8")
    for p in sorted(REPO.glob("sample_processes/*/PROCESS.md"))
    + sorted(SPEC.glob("conformance/fixtures/*/PROCESS.md"))
]

YAMLISH = "abz09 -_:#&*!|>'\"%@`{}[],?\t\n\r\\~.=+\ue000é😀"


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A real process document with a few random edits: lines deleted, repeated, swapped, re-indented,
    text inserted or replaced, the file cut short, line ends changed."""
    lines = draw(st.sampled_from(SOURCES)).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, max(len(lines) - 1, 0)))
        edit = draw(st.sampled_from(["delete", "repeat", "swap", "indent", "insert", "replace", "cut"]))
        if edit == "delete" and lines:
            del lines[at]
        elif edit == "repeat" and lines:
            lines.insert(at, lines[at] * draw(st.integers(1, 3)))
        elif edit == "swap" and len(lines) > 1:
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif edit == "indent" and lines:
            lines[at] = " " * draw(st.integers(0, 6)) + lines[at].lstrip()
        elif edit == "insert":
            lines.insert(at, draw(st.text(YAMLISH, max_size=30)))
        elif edit == "replace" and lines and lines[at]:
            column = draw(st.integers(0, len(lines[at]) - 1))
            lines[at] = (
                lines[at][:column] + draw(st.text(YAMLISH, min_size=1, max_size=3)) + lines[at][column + 1 :]
            )
        elif edit == "cut":
            lines = lines[:at]
    text = "\n".join(lines)
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


PLAIN_SAFE = re.compile(r"[A-Za-z][A-Za-z0-9 _./()-]*[A-Za-z0-9)]|[A-Za-z]")
"""Text that reads back as the same string when written unquoted, in block and flow context alike."""


def _plain_ok(text: str) -> bool:
    return bool(PLAIN_SAFE.fullmatch(text)) and resolve_plain(text).endswith(":str") and "  " not in text


@st.composite
def scalar(draw: st.DrawFn, value: Any) -> str:
    if value is None:
        return draw(st.sampled_from(["null", "~", "Null", "NULL"]))
    if isinstance(value, bool):
        return draw(st.sampled_from(["true", "True", "TRUE"] if value else ["false", "False", "FALSE"]))
    if isinstance(value, int):
        forms = [str(value)]
        if value >= 0:
            forms += [hex(value), f"0o{value:o}"]
        return draw(st.sampled_from(forms))
    if isinstance(value, float):
        return repr(value)
    assert isinstance(value, str)
    forms = [json.dumps(value, ensure_ascii=draw(st.booleans()))]
    if not any(c in value for c in "\n\r\t\x85\u2028\u2029") and value.isprintable():
        forms.append("'" + value.replace("'", "''") + "'")
    if _plain_ok(value):
        forms.append(value)
    return draw(st.sampled_from(forms))


@st.composite
def flow(draw: st.DrawFn, value: Any) -> str:
    if isinstance(value, dict):
        items = [f"{draw(scalar(k))}: {draw(flow(v))}" for k, v in value.items()]
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(draw(flow(v)) for v in value) + "]"
    return draw(scalar(value))


@st.composite
def block(draw: st.DrawFn, value: Any, indent: int) -> list[str]:
    """Lines of `value` as a block collection at `indent` (a scalar or an empty one goes inline)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            head = f"{pad}{draw(scalar(key))}:"
            if isinstance(item, dict | list) and item and draw(st.booleans()):
                lines.append(head)
                lines += draw(block(item, indent + 2))
            else:
                lines.append(f"{head} {draw(flow(item))}")
            if draw(st.integers(0, 9)) == 0:
                lines.append(f"{pad}# {draw(st.text('abc xyz', max_size=10))}")
    else:
        for item in value:
            if isinstance(item, dict) and item and draw(st.booleans()):
                inner = draw(block(item, indent + 2))
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines += inner[1:]
            else:
                lines.append(f"{pad}- {draw(flow(item))}")
    return lines


@st.composite
def written(draw: st.DrawFn, frontmatter: dict[str, Any], body: str) -> str:
    """The document with the frontmatter in one random layout; the body exactly as given."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = draw(block(frontmatter, 0)) if draw(st.integers(0, 4)) else [draw(flow(frontmatter))]
    return "---" + newline + newline.join(lines) + newline + "---" + newline + body


TEXT = st.characters(
    codec="utf-8", exclude_categories=["Cs", "Cc", "Cn", "Co", "Zl", "Zp"], exclude_characters="\ufeff"
)
"""Characters YAML may carry in a quoted scalar (its printable set), line separators left out."""
WORDS = st.text(TEXT, min_size=1, max_size=30).filter(lambda s: bool(s.strip()))
IDS = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
ROLES = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True).filter(lambda r: r != "initiator")
DURATIONS = st.builds(lambda n, unit: f"{n}{unit}", st.integers(1, 500), st.sampled_from("mhd"))
TYPES = ["string", "number", "boolean", "date", "datetime", "list", "object", "person"]


@st.composite
def fields(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in draw(
        st.lists(st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,8}", fullmatch=True), max_size=3, unique=True)
    ):
        kind = draw(st.sampled_from(TYPES))
        if draw(st.booleans()):
            out[name] = kind
            continue
        spec: dict[str, Any] = {"type": kind}
        if draw(st.booleans()):
            spec["description"] = draw(WORDS)
        if draw(st.booleans()):
            spec["optional"] = True
        if kind == "string" and draw(st.booleans()):
            spec["one_of"] = draw(st.lists(WORDS, min_size=1, max_size=3, unique=True))
        if kind == "number" and draw(st.booleans()):
            numbers = st.integers(-(2**53) + 1, 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False)
            spec["one_of"] = draw(st.lists(numbers, min_size=1, max_size=3))
        if kind == "list" and draw(st.booleans()):
            spec["items"] = draw(st.sampled_from(TYPES))
        out[name] = spec
    return out


@st.composite
def processes(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A valid frontmatter (core only: agent, task, approve, wait, wait_for steps and a finish) and a body."""
    ids = draw(st.lists(IDS, min_size=2, max_size=7, unique=True))
    steps: list[dict[str, Any]] = []
    for index, step_id in enumerate(ids[:-1]):
        kind = draw(st.sampled_from(["agent", "task", "approve", "wait", "wait_for"]))
        step: dict[str, Any] = {"id": step_id}
        later = ids[index + 1 :]
        earlier_work = [s["id"] for s in steps if "agent" in s or "task" in s]
        if kind in ("agent", "task"):
            if kind == "task":
                step["person"] = draw(ROLES)
            step[kind] = draw(WORDS)
            if draw(st.booleans()):
                step["output"] = draw(fields())
            if draw(st.booleans()):
                step["evidence"] = draw(
                    st.lists(st.sampled_from(["file", "link"]), min_size=1, max_size=2, unique=True)
                )
            if len(later) > 1 and draw(st.booleans()):
                step["next"] = [later[0], {"to": later[-1], "when": draw(WORDS)}]
        elif kind == "approve":
            step["person"] = draw(ROLES)
            step["approve"] = draw(WORDS)
            if len(earlier_work) > 0 and draw(st.booleans()):
                step["on_reject"] = draw(st.sampled_from(earlier_work))
        elif kind == "wait":
            step["wait"] = draw(DURATIONS)
        else:
            step["wait_for"] = draw(IDS)
            if draw(st.booleans()):
                step["timeout"] = draw(DURATIONS)
                if draw(st.booleans()):
                    step["on_timeout"] = draw(st.sampled_from(later))
        if kind in ("agent", "task", "approve") and draw(st.booleans()):
            step["due"] = draw(DURATIONS)
        steps.append(step)
    steps.append({"id": ids[-1], "finish": draw(st.from_regex(r"[a-z]{1,10}", fullmatch=True))})
    frontmatter: dict[str, Any] = {
        "name": draw(st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,4}){0,2}", fullmatch=True)),
        "description": draw(WORDS),
    }
    if draw(st.booleans()):
        frontmatter["inputs"] = draw(fields())
    if draw(st.booleans()):
        frontmatter["requires"] = {
            "systems": draw(
                st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=3, unique=True)
            )
        }
    frontmatter["steps"] = steps
    body = draw(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=200))
    return frontmatter, body
