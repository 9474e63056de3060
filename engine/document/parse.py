"""PROCESS.md as text: split the frontmatter from the body and read the frontmatter as YAML 1.2 core.

The spec pins the frontmatter to the YAML 1.2 core schema and the content hash to its JSON form, so
ruamel.yaml is used only to build the node graph; every scalar is resolved and every node turned into
a plain JSON value here. That keeps `yes`, dates, `1_000` and `<<` strings, refuses what JSON cannot
hold exactly, and bounds the work an untrusted file can cause: its size and a flow document's depth
before any parsing (`bounds`), then parser events, depth and alias expansion. The event cap is checked
as the parser hands events out, so no document under the size cap costs more than that many events of
pure-Python parsing before it is refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer, MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.parser import Parser
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.resolver import BaseResolver
from ruamel.yaml.tag import Tag

from engine.document.bounds import MAX_DEPTH, refusal
from engine.document.model import Issue

MAX_EVENTS = 10_000
"""YAML parser events (each scalar, alias, collection start and end): ~25 times the largest sample
process, and about a quarter of a second of parsing on a slow machine (bench/document_bounds.py)."""
MAX_NODES = 100_000
"""Values produced after expanding aliases: stops a billion-laughs document."""
MAX_SAFE_INTEGER = 2**53 - 1
"""Larger integers stay refused, though spec §2 names no limit: the content hash (spec §6 rule 5) is
defined over the RFC 8785 JSON of the frontmatter, which writes numbers as IEEE doubles and so cannot
represent them; a document holding one would have no well-defined hash."""

_CORE = "tag:yaml.org,2002:"
STR, NULL, BOOL, INT, FLOAT = (_CORE + t for t in ("str", "null", "bool", "int", "float"))
MAP, SEQ = _CORE + "map", _CORE + "seq"

# The YAML 1.2.2 core schema, §10.3.2, exactly: no underscores, no 0b, no sign on 0o/0x.
_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_BOOL = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_INT_DEC = re.compile(r"[-+]?[0-9]+\Z")
_INT_OCT = re.compile(r"0o[0-7]+\Z")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?(?:\.inf|\.Inf|\.INF)\Z")
_NAN = re.compile(r"(?:\.nan|\.NaN|\.NAN)\Z")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
"""Only `\\u` escapes make these: JSON-style pairs become the character, a lone half is refused."""


@dataclass(frozen=True)
class ParsedDocument:
    frontmatter: Any | None
    """Plain JSON values; None when the document has no usable frontmatter (see `issues`)."""
    body: str | None
    issues: tuple[Issue, ...]


class CoreResolver(BaseResolver):
    """Tags plain scalars by the 1.2 core schema whatever `%YAML` directive the file carries."""

    def __init__(self, version: Any = None, loader: Any = None, loadumper: Any = None) -> None:
        super().__init__(loader if loader is not None else loadumper)
        self._loader_version = version

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Tag:
        if kind is ScalarNode:
            return Tag(suffix=resolve_plain(value) if implicit[0] else STR)
        return Tag(suffix=SEQ if kind is SequenceNode else MAP)

    @property
    def processing_version(self) -> tuple[int, int]:
        return (1, 2)


def resolve_plain(text: str) -> str:
    """The core-schema tag of a plain (unquoted, untagged) scalar."""
    if _NULL.match(text):
        return NULL
    if _BOOL.match(text):
        return BOOL
    if _INT_DEC.match(text) or _INT_OCT.match(text) or _INT_HEX.match(text):
        return INT
    if _FLOAT.match(text) or _INF.match(text) or _NAN.match(text):
        return FLOAT
    return STR


class _CoreComposer(Composer):
    """Two departures from ruamel that YAML 1.2 asks for.

    A reused anchor name is legal (the later one wins), so no warning. A scalar with the non-specific
    tag `!` is a string (YAML 1.2, non-specific tags); ruamel would resolve `! 12` as a plain scalar.
    """

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self.warn_double_anchors = False

    def compose_scalar_node(self, anchor: Any) -> Any:
        event = self.parser.peek_event()
        if event.ctag is not None and str(event.ctag) == "!":
            event.ctag = Tag(suffix=STR)
        return super().compose_scalar_node(anchor)


class _TooManyEvents(Exception):
    """Raised from inside the parser at the event cap; the composer never sees another event."""


class _BoundedParser(Parser):
    """The pure-Python parser, counting the events it hands to the composer and stopping at the cap."""

    def __init__(self, loader: Any) -> None:
        super().__init__(loader)
        self.events = 0

    def get_event(self) -> Any:
        self.events += 1
        if self.events > MAX_EVENTS:
            raise _TooManyEvents
        return super().get_event()


class _Abort(Exception):
    """Stops the walk when going on would only cost work: the issue says why."""

    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def split_document(text: str) -> tuple[str | None, str | None, list[Issue]]:
    """Frontmatter text (its line endings kept) and the body exactly as written after the closing line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_line.removesuffix("\r") != "---":
        return None, None, [Issue("", "no frontmatter: the first line must be exactly '---'")]
    start = pos = len(text) if first_end < 0 else first_end + 1
    while pos < len(text):
        end = text.find("\n", pos)
        line_end = len(text) if end < 0 else end
        if text[pos:line_end].removesuffix("\r") == "---":
            body = "" if end < 0 else text[end + 1 :]
            return text[start:pos], body, []
        pos = line_end + 1
    return None, None, [Issue("", "frontmatter is not closed: no line '---' after the first")]


def parse_yaml(text: str, line_offset: int = 0) -> tuple[Any, list[Issue]]:
    """One YAML 1.2 core document as plain JSON values; the value is None whenever there are issues.

    `line_offset` is added to reported line numbers so they point into the whole file.
    """
    if (refused := refusal(text, line_offset)) is not None:
        return None, [refused]
    yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = CoreResolver
    yaml.Composer = _CoreComposer
    yaml.Parser = _BoundedParser
    yaml.max_depth = MAX_DEPTH
    documents = yaml.compose_all(text)
    try:
        root = next(documents, None)
        if next(documents, None) is not None:
            return None, [Issue("", "frontmatter must be one YAML document, found more than one")]
    except YAMLError as exc:
        return None, [Issue("", _syntax_message(exc, text, line_offset))]
    except _TooManyEvents:
        message = f"frontmatter has more than {MAX_EVENTS} YAML events; a process is a page of instructions"
        return None, [Issue("", message)]
    finally:
        documents.close()
    if root is None:
        return None, []
    builder = _Builder(line_offset)
    try:
        value = builder.build(root, "", 0)
    except _Abort as stop:
        builder.issues.append(stop.issue)
    return (None, builder.issues) if builder.issues else (value, [])


def parse_document(text: str) -> ParsedDocument:
    """Split and parse a whole PROCESS.md; every problem comes back as an issue, nothing raises."""
    frontmatter_text, body, issues = split_document(text)
    if frontmatter_text is None:
        return ParsedDocument(None, body, tuple(issues))
    value, issues = parse_yaml(frontmatter_text, line_offset=1)
    if issues:
        return ParsedDocument(None, body, tuple(issues))
    if not isinstance(value, dict):
        return ParsedDocument(None, body, (Issue("", "frontmatter must be a mapping"),))
    return ParsedDocument(value, body, ())


def _syntax_message(exc: YAMLError, text: str, line_offset: int) -> str:
    if isinstance(exc, MaxDepthExceededError) and exc.problem_mark is not None:
        return f"frontmatter nests deeper than {MAX_DEPTH} levels (line {exc.problem_mark.line + 1 + line_offset})"
    if isinstance(exc, MarkedYAMLError):
        problem = exc.problem or exc.context or "invalid YAML"
        mark = exc.problem_mark or exc.context_mark
        if mark is not None:
            return (
                f"YAML syntax error: {problem} (line {mark.line + 1 + line_offset}, column {mark.column + 1})"
            )
        return f"YAML syntax error: {problem}"
    if isinstance(exc, ReaderError) and isinstance(exc.position, int):
        line = text.count("\n", 0, exc.position) + 1 + line_offset
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        return f"YAML syntax error: character U+{exc.character:04X} is not allowed (line {line}, column {column})"
    return "YAML syntax error: the text cannot be read as YAML"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _show_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag


class _Builder:
    """Turns a composed node graph into JSON values, expanding aliases under a node and depth budget."""

    def __init__(self, line_offset: int) -> None:
        self.line_offset = line_offset
        self.issues: list[Issue] = []
        self.nodes = 0
        self.expanding: set[int] = set()
        """Collections being built: an alias to one of them would never end."""

    def at(self, node: Node) -> str:
        return f"(line {node.start_mark.line + 1 + self.line_offset})"

    def refuse(self, path: str, message: str, node: Node) -> None:
        self.issues.append(Issue(path, f"{message} {self.at(node)}"))

    def build(self, node: Node, path: str, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Abort(
                Issue("", f"frontmatter expands to more than {MAX_NODES} values (aliases count each time)")
            )
        if depth > MAX_DEPTH:
            raise _Abort(Issue(path, f"nesting deeper than {MAX_DEPTH} levels {self.at(node)}"))
        if id(node) in self.expanding:
            self.refuse(path, "alias refers to a node that contains it", node)
            return None
        tag = str(node.tag)
        if isinstance(node, ScalarNode):
            return self.scalar(node, tag, path)
        is_list = isinstance(node, SequenceNode)
        if tag != (SEQ if is_list else MAP):
            self.refuse(path, self.tag_problem(tag, "list" if is_list else "mapping"), node)
            return None
        self.expanding.add(id(node))
        try:
            if is_list:
                return [self.build(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(node.value)]
            assert isinstance(node, MappingNode)
            return self.mapping(node, path, depth)
        finally:
            self.expanding.discard(id(node))

    def mapping(self, node: MappingNode, path: str, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = self.key(key_node, path, depth)
            if key is None:
                continue
            line = key_node.start_mark.line + 1 + self.line_offset
            if key in result:
                self.issues.append(
                    Issue(
                        _join(path, key),
                        f"duplicate key {key!r} (line {line}, first at line {first_line[key]})",
                    )
                )
                continue
            first_line[key] = line
            result[key] = self.build(value_node, _join(path, key), depth + 1)
        return result

    def key(self, node: Node, path: str, depth: int) -> str | None:
        if isinstance(node, ScalarNode):
            known = len(self.issues)
            value = self.build(node, path, depth + 1)
            if isinstance(value, str):
                return value
            if len(self.issues) == known:
                self.refuse(path, f"key {_clip(node.value)!r} is not a string", node)
            return None
        self.refuse(
            path, f"key is a {'list' if isinstance(node, SequenceNode) else 'mapping'}, not a string", node
        )
        return None

    def tag_problem(self, tag: str, kind: str) -> str:
        if tag in (STR, NULL, BOOL, INT, FLOAT, MAP, SEQ):
            return f"tag {_show_tag(tag)} does not apply to a {kind}"
        return f"tag {_show_tag(tag)!r} is not a YAML core schema tag"

    def scalar(self, node: ScalarNode, tag: str, path: str) -> Any:
        text: str = node.value
        if _SURROGATE.search(text):
            try:
                text = text.encode("utf-16", "surrogatepass").decode("utf-16")
            except UnicodeDecodeError:
                self.refuse(path, "a \\u escape names half a surrogate pair, not a character", node)
                return None
        if tag == STR:
            return text
        if tag == NULL and _NULL.match(text):
            return None
        if tag == BOOL and _BOOL.match(text):
            return text[0] in "tT"
        if tag == INT and (_INT_DEC.match(text) or _INT_OCT.match(text) or _INT_HEX.match(text)):
            return self.integer(node, text, path)
        if tag == FLOAT and (_INF.match(text) or _NAN.match(text)):
            self.refuse(path, f"{text!r} is not a finite number", node)
            return None
        if tag == FLOAT and _FLOAT.match(text):
            number = float(text)
            if math.isfinite(number):
                return number
            self.refuse(path, f"{_clip(text)!r} is not a finite number", node)
            return None
        if tag in (STR, NULL, BOOL, INT, FLOAT):
            self.refuse(path, f"{_clip(text)!r} is not a valid {_show_tag(tag)}", node)
        else:
            self.refuse(path, self.tag_problem(tag, "scalar"), node)
        return None

    def integer(self, node: ScalarNode, text: str, path: str) -> int | None:
        base = {"0o": 8, "0x": 16}.get(text[:2], 10)
        digits = text if base == 10 else text[2:]
        significant = digits.lstrip("+-").lstrip("0")
        if len(significant) <= 16:
            number = int(digits, base)
            if abs(number) <= MAX_SAFE_INTEGER:
                return number
        self.refuse(path, f"integer {_clip(text)} is outside ±(2**53-1): JSON cannot hold it exactly", node)
        return None


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
