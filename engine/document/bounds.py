"""What a frontmatter may cost to read, checked over its raw text before the YAML parser sees it.

The parser is pure Python, so its work grows with the text. Two things bound it here, at C speed:
the size, and the nesting of a document written as one flow collection (JSON is one): there the
composer finds the depth past `MAX_DEPTH` only once the parser has read everything before it, which
in dense flow text is slow. Nesting written in block style is refused by the composer as soon as it
is reached (it composes depth first, and block text is cheap to parse), and the parser's event cap
bounds everything else (`parse.MAX_EVENTS`).

The depth scan follows the pure scanner's own token rules (ruamel.yaml's, with the 1.2 flow rules),
so it counts a collection only where the parser will open one, and it stops, leaving the text to the
parser, at anything it does not follow (directives, document markers, tags holding flow indicators,
line breaks other than LF and CRLF). A text it refuses the parser refuses too, with the same issue
unless a syntax error comes first.
"""

from __future__ import annotations

import re

from ruamel.yaml.reader import Reader

from engine.document.model import Issue

MAX_FRONTMATTER_BYTES = 64 * 1024
"""Ten times the largest sample process's frontmatter; long text goes in the body, which is not YAML."""
MAX_DEPTH = 64

_BLANK = re.compile(r"(?:[ \t]+|\r?\n|#[^\r\n]*)*")
"""Between tokens in flow context: spaces, tabs, line breaks, comments."""
_BLANK_BLOCK = re.compile(r"(?:[ ]+|\r?\n|#[^\r\n]*)*")
"""Before the first token, in block context, where a tab starts no token."""
_UNFOLLOWED = re.compile(r"\r(?!\n)|[\x85\u2028\u2029]")
_MARKER = re.compile(r"(?:---|\.\.\.)(?=[ \t\r\n]|\Z)")
_MARKER_INSIDE = re.compile(r"\n(?:---|\.\.\.)(?=[ \t\r\n]|\Z)")
_NAME = re.compile(r"[^ \t\r\n,\[\]{}]*")
"""An anchor's or alias's name: up to a space or a flow indicator."""
_TAG = re.compile(r"[^ \r\n]*")
_QUOTED = {"'": re.compile(r"'(?:[^']|'')*'"), '"': re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)}
_PLAIN_CHAR = r"(?:[^ \t\r\n,\[\]{}:]|:(?![ \t\r\n]|\Z))"
_PLAIN_LINE = re.compile(rf"(?:{_PLAIN_CHAR}+(?: +(?!#){_PLAIN_CHAR}+)*)?")
"""A flow plain scalar's run on one line: words of plain characters, spaces between, `#` after a
space ending it; `:` belongs to it unless a space or the end follows."""
_PLAIN_CONTINUES = re.compile(r"(?:[ ]*\r?\n)+[ ]*(?=[^#\s,\[\]{}:]|:(?![ \t\r\n]|\Z))")
_NOT_A_TOKEN = frozenset("|>%@`")
_END_SPACE_TAB = frozenset(" \t\r\n")


class _Unfollowed(Exception):
    """The text does what the scan does not follow: the parser reads it as it would anyway."""


def refusal(text: str, line_offset: int = 0) -> Issue | None:
    """The issue refusing the frontmatter `text` before any parsing, or None to go on and parse it."""
    if (
        len(text) > MAX_FRONTMATTER_BYTES
        or len(text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES
    ):
        return Issue("", f"frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB")
    if _UNFOLLOWED.search(text) or Reader.NON_PRINTABLE.search(text):
        return None
    try:
        deepest = _too_deep_at(text)
    except _Unfollowed:
        return None
    if deepest is None:
        return None
    line = text.count("\n", 0, deepest) + 1 + line_offset
    return Issue("", f"frontmatter nests deeper than {MAX_DEPTH} levels (line {line})")


def _too_deep_at(text: str) -> int | None:
    """Where a node of a flow-rooted document first sits deeper than `MAX_DEPTH` (the root is at
    depth 1); None when it never does, or the document is not one flow collection."""
    pos = _properties(text, _past(_BLANK_BLOCK, text, 0))
    if pos >= len(text) or text[pos] not in "[{":
        return None
    open_: list[str] = []
    last = ""
    while True:
        pos = _past(_BLANK, text, pos)
        if pos >= len(text) or _at_marker(text, pos):
            raise _Unfollowed
        ch = text[pos]
        after = text[pos + 1] if pos + 1 < len(text) else ""
        starts_a_node = ch in "[{" or ch in "'\"" or _starts_plain(ch, after, open_, last)
        if starts_a_node and len(open_) >= MAX_DEPTH:
            return pos
        if ch in "[{":
            open_.append(ch)
            pos, last = pos + 1, "open"
        elif ch in "]}":
            if not open_:
                raise _Unfollowed
            open_.pop()
            if not open_:
                return None
            pos, last = pos + 1, "close"
        elif ch == ",":
            pos, last = pos + 1, "entry"
        elif ch == "?" or (ch == "-" and (after == "" or after in _END_SPACE_TAB)):
            pos, last = pos + 1, "indicator"
        elif ch == ":" and _is_value(after, open_, last):
            pos, last = pos + 1, "value"
        elif ch in "*&":
            end = _past(_NAME, text, pos + 1)
            if end == pos + 1:
                raise _Unfollowed
            pos, last = end, "property"
        elif ch == "!":
            pos, last = _tag(text, pos), "property"
        elif ch in "'\"":
            pos, last = _quoted(text, pos), "scalar"
        elif ch in _NOT_A_TOKEN:
            raise _Unfollowed
        else:
            pos, last = _plain(text, pos), "scalar"


def _past(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where `pattern`, which also matches nothing, stops matching from `pos`."""
    found = pattern.match(text, pos)
    assert found is not None
    return found.end()


def _properties(text: str, pos: int) -> int:
    """Past the anchors and tags written before the root (`!!map {...}`)."""
    while pos < len(text) and text[pos] in "&!":
        if _at_marker(text, pos):
            raise _Unfollowed
        pos = _tag(text, pos) if text[pos] == "!" else _past(_NAME, text, pos + 1)
        pos = _past(_BLANK_BLOCK, text, pos)
    return pos


def _at_marker(text: str, pos: int) -> bool:
    """A document marker, or a directive: tokens only at the start of a line."""
    at_line_start = pos == 0 or text[pos - 1] == "\n"
    return at_line_start and (text[pos] == "%" or _MARKER.match(text, pos) is not None)


def _is_value(after: str, open_: list[str], last: str) -> bool:
    """The scanner's `check_value` in flow context (YAML 1.2): in a sequence, or straight after a
    value, `:` is a value only before a space or a line end; elsewhere always."""
    if open_[-1] == "[" or last == "value":
        return after == "" or after in _END_SPACE_TAB
    return True


def _starts_plain(ch: str, after: str, open_: list[str], last: str) -> bool:
    """The scanner's `check_plain` in flow context, for a character no other token takes."""
    if ch in "[]{},?*&!'\"#" or ch in _NOT_A_TOKEN or ch in _END_SPACE_TAB:
        return False
    if ch == "-":
        return after != "" and after not in _END_SPACE_TAB
    if ch == ":":
        return not _is_value(after, open_, last) and after not in " \t"
    return True


def _tag(text: str, pos: int) -> int:
    end = _past(_TAG, text, pos)
    if re.search(r"[,\[\]{}\t]", text[pos:end]):
        raise _Unfollowed
    return end


def _quoted(text: str, pos: int) -> int:
    found = _QUOTED[text[pos]].match(text, pos)
    if found is None or _MARKER_INSIDE.search(found.group()):
        raise _Unfollowed
    return found.end()


def _plain(text: str, pos: int) -> int:
    """Past a plain scalar in flow context: runs of plain words, on as many lines as it goes on."""
    while True:
        end = _past(_PLAIN_LINE, text, pos)
        if end == pos:
            raise _Unfollowed
        pos = end
        more = _PLAIN_CONTINUES.match(text, pos)
        if more is None:
            return pos
        if _MARKER_INSIDE.search(text, pos, more.end() + 3):
            raise _Unfollowed
        pos = more.end()
