"""PROCESS.md splitting and YAML 1.2 core-schema parsing: values, refusals, bounds, robustness."""

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.document.model import Issue
from engine.document.parse import (
    MAX_FRONTMATTER_BYTES,
    ParsedDocument,
    parse_document,
    parse_yaml,
    split_document,
)

NOT_OPENED = Issue("", "no frontmatter: the first line must be exactly '---'")
NOT_CLOSED = Issue("", "frontmatter is not closed: no line '---' after the first")
FIXTURES = Path(__file__).resolve().parents[4] / "shared" / "agentprocess" / "conformance" / "fixtures"


# split_document


def test_split_returns_frontmatter_and_body_exactly_as_written() -> None:
    text = "---\nname: a\n---\n\n# Title\n\nLine with trailing spaces   \nno final newline"
    assert split_document(text) == (
        "name: a\n",
        "\n# Title\n\nLine with trailing spaces   \nno final newline",
        [],
    )


def test_split_tolerates_a_bom_and_crlf_and_keeps_crlf_in_the_body() -> None:
    assert split_document("\ufeff---\r\nname: a\r\n---\r\nBody  \r\n") == ("name: a\r\n", "Body  \r\n", [])


def test_split_closing_line_at_end_of_text_gives_an_empty_body() -> None:
    assert split_document("---\nname: a\n---") == ("name: a\n", "", [])


def test_split_empty_frontmatter() -> None:
    assert split_document("---\n---\nbody") == ("", "body", [])


def test_split_closes_at_the_first_line_that_is_exactly_three_dashes() -> None:
    text = "---\na: |\n  ----\n  --- \n---\nb\n---\n"
    assert split_document(text) == ("a: |\n  ----\n  --- \n", "b\n---\n", [])


@pytest.mark.parametrize(
    "text", ["", "# Title\n", "--- \nname: a\n---\n", " ---\n---\n", "----\n---\n", "\n---\n"]
)
def test_split_without_an_opening_line_is_an_issue(text: str) -> None:
    assert split_document(text) == (None, None, [NOT_OPENED])


@pytest.mark.parametrize(
    "text", ["---", "---\n", "---\nname: a\n", "---\nname: a\n--- \n", "---\r\nname: a\r\n"]
)
def test_split_without_a_closing_line_is_an_issue(text: str) -> None:
    assert split_document(text) == (None, None, [NOT_CLOSED])


# parse_yaml: the core schema


@pytest.mark.parametrize(
    ("scalar", "expected"),
    [
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("Yes", "Yes"),
        ("y", "y"),
        ("2026-10-06", "2026-10-06"),
        ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
        ("1_000", "1_000"),
        ("0b101", "0b101"),
        ("1:20", "1:20"),
        ("-0o7", "-0o7"),
        ("+0x1", "+0x1"),
        ("0o8", "0o8"),
        ("0x", "0x"),
        ("tRue", "tRue"),
        ("nULL", "nULL"),
        ("inf", "inf"),
        ("nan", "nan"),
        ("~", None),
        ("null", None),
        ("Null", None),
        ("NULL", None),
        ("", None),
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        ("42", 42),
        ("-42", -42),
        ("+42", 42),
        ("0", 0),
        ("-0", 0),
        ("010", 10),
        ("-010", -10),
        ("00", 0),
        ("0o17", 15),
        ("0x1F", 31),
        ("0xff", 255),
        ("1.5", 1.5),
        ("-1.5", -1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("-.5E-2", -0.005),
        ("1e3", 1000.0),
        ("1.5e+3", 1500.0),
        ("'42'", "42"),
        ('"true"', "true"),
        ("'~'", "~"),
        ("!!str 42", "42"),
        ("! 42", "42"),
        ('! "42"', "42"),
        ("!!int '42'", 42),
        ("!!int 0x10", 16),
        ("!!float 1", 1.0),
        ("!!float '.5'", 0.5),
        ("!!bool 'true'", True),
        ("!!null ''", None),
        ("!<tag:yaml.org,2002:str> 3", "3"),
        ('"\\ud83d\\ude00"', "😀"),
        ('"\\U0001F600 \\t é"', "😀 \t é"),
    ],
)
def test_scalars_resolve_by_the_yaml_1_2_core_schema(scalar: str, expected: Any) -> None:
    value, issues = parse_yaml(f"v: {scalar}\n")
    assert issues == []
    assert value == {"v": expected}
    assert type(value["v"]) is type(expected)


def test_merge_key_is_an_ordinary_key() -> None:
    text = "base: &b {a: 1}\nchild:\n  <<: *b\n  c: 2\n"
    assert parse_yaml(text) == ({"base": {"a": 1}, "child": {"<<": {"a": 1}, "c": 2}}, [])


def test_yaml_1_1_directive_does_not_switch_the_schema() -> None:
    assert parse_yaml("%YAML 1.1\n---\na: yes\nb: 010\n") == ({"a": "yes", "b": 10}, [])


def test_core_tags_on_collections_are_accepted() -> None:
    assert parse_yaml("!!map {a: !!seq [1]}\n") == ({"a": [1]}, [])


def test_aliases_expand_to_copies_and_anchor_names_may_be_reused() -> None:
    text = "a: &x [1, 2]\nb: *x\nc: &x 3\nd: *x\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_yaml(text) == ({"a": [1, 2], "b": [1, 2], "c": 3, "d": 3}, [])


def test_empty_and_comment_only_text_is_null() -> None:
    assert parse_yaml("") == (None, [])
    assert parse_yaml("# nothing\n") == (None, [])


def _plain_json(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is dict and all(type(k) is str and _plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return type(value) is list and all(_plain_json(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def test_values_are_plain_python_types() -> None:
    text = "a: [1, 1.5, x, 'q', true, ~, {b: c}]\nd: |\n  block\ne: >\n  folded\n"
    value, issues = parse_yaml(text)
    assert issues == []
    assert value == {"a": [1, 1.5, "x", "q", True, None, {"b": "c"}], "d": "block\n", "e": "folded\n"}
    assert _plain_json(value)


# parse_yaml: refusals


def _refused(text: str) -> list[str]:
    value, issues = parse_yaml(text)
    assert value is None
    return [str(issue) for issue in issues]


def test_duplicate_keys_are_refused_at_every_level_with_the_key_and_lines() -> None:
    text = "name: a\nname: b\nsteps:\n  - id: s\n    next: x\n  - id: t\n    next: y\n    'next': z\nm: {k: 1, k: 2}\n"
    assert _refused(text) == [
        "name: duplicate key 'name' (line 2, first at line 1)",
        "steps[1].next: duplicate key 'next' (line 8, first at line 7)",
        "m.k: duplicate key 'k' (line 9, first at line 9)",
    ]


@pytest.mark.parametrize(
    ("text", "issue"),
    [
        ("1: x\n", "key '1' is not a string (line 1)"),
        ("inputs:\n  true: x\n", "inputs: key 'true' is not a string (line 2)"),
        ("~: x\n", "key '~' is not a string (line 1)"),
        ("a:\n  : x\n", "a: key '' is not a string (line 2)"),
        ("a:\n  1.5: x\n", "a: key '1.5' is not a string (line 2)"),
        ("? [a]\n: x\n", "key is a list, not a string (line 1)"),
        ("? {a: 1}\n: x\n", "key is a mapping, not a string (line 1)"),
        ("!!int 1: x\n", "key '1' is not a string (line 1)"),
    ],
)
def test_non_string_keys_are_refused(text: str, issue: str) -> None:
    assert _refused(text) == [issue]


@pytest.mark.parametrize(
    ("text", "issue"),
    [
        ("a: !foo x\n", "a: tag '!foo' is not a YAML core schema tag (line 1)"),
        (
            "a: !!python/name:os.system x\n",
            "a: tag '!!python/name:os.system' is not a YAML core schema tag (line 1)",
        ),
        ("a: !!timestamp 2026-10-06\n", "a: tag '!!timestamp' is not a YAML core schema tag (line 1)"),
        ("a: !!binary aGk=\n", "a: tag '!!binary' is not a YAML core schema tag (line 1)"),
        ("a: !!set {x}\n", "a: tag '!!set' is not a YAML core schema tag (line 1)"),
        ("a: !!omap [b: 1]\n", "a: tag '!!omap' is not a YAML core schema tag (line 1)"),
        ("a: !!merge x\n", "a: tag '!!merge' is not a YAML core schema tag (line 1)"),
        (
            "%TAG !! tag:evil.example,2000:\n---\na: !!str x\n",
            "a: tag 'tag:evil.example,2000:str' is not a YAML core schema tag (line 3)",
        ),
        ("a: !!str [1]\n", "a: tag !!str does not apply to a list (line 1)"),
        ("a: !!map x\n", "a: tag !!map does not apply to a scalar (line 1)"),
        ("a: !!seq {b: 1}\n", "a: tag !!seq does not apply to a mapping (line 1)"),
        ("a: !!int x\n", "a: 'x' is not a valid !!int (line 1)"),
        ("a: !!int 1.5\n", "a: '1.5' is not a valid !!int (line 1)"),
        ("a: !!bool yes\n", "a: 'yes' is not a valid !!bool (line 1)"),
        ("a: !!null x\n", "a: 'x' is not a valid !!null (line 1)"),
        ("a: !!float 0x10\n", "a: '0x10' is not a valid !!float (line 1)"),
        ("!foo a: x\n", "tag '!foo' is not a YAML core schema tag (line 1)"),
    ],
)
def test_tags_other_than_the_core_ones_are_refused(text: str, issue: str) -> None:
    assert _refused(text) == [issue]


@pytest.mark.parametrize("scalar", [".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1e999", "!!float .inf"])
def test_non_finite_floats_are_refused(scalar: str) -> None:
    shown = scalar.removeprefix("!!float ")
    assert _refused(f"a: {scalar}\n") == [f"a: {shown!r} is not a finite number (line 1)"]


def test_integers_up_to_2_pow_53_minus_1_are_kept_exactly() -> None:
    text = "a: 9007199254740991\nb: -9007199254740991\nc: 0x1FFFFFFFFFFFFF\n"
    assert parse_yaml(text) == ({"a": 2**53 - 1, "b": -(2**53 - 1), "c": 2**53 - 1}, [])


@pytest.mark.parametrize(
    ("scalar", "shown"),
    [
        ("9007199254740992", "9007199254740992"),
        ("-9007199254740992", "-9007199254740992"),
        ("0x20000000000000", "0x20000000000000"),
        ("0o400000000000000000", "0o400000000000000000"),
        ("9" * 5000, "9" * 40 + "…"),
    ],
)
def test_integers_json_cannot_hold_exactly_are_refused(scalar: str, shown: str) -> None:
    assert _refused(f"a: {scalar}\n") == [
        f"a: integer {shown} is outside ±(2**53-1): JSON cannot hold it exactly (line 1)"
    ]


@pytest.mark.parametrize(
    ("text", "issue"),
    [
        ("a: [1, 2\n", "YAML syntax error: expected ',' or ']', but got '<stream end>' (line 2, column 1)"),
        ("a: b: c\n", "YAML syntax error: mapping values are not allowed here (line 1, column 5)"),
        (
            "a:\n\t- x\n",
            "YAML syntax error: found character '\\t' that cannot start any token (line 2, column 1)",
        ),
        ("a: *nope\n", "YAML syntax error: found undefined alias 'nope' (line 1, column 4)"),
        ("a: \x00\n", "YAML syntax error: character U+0000 is not allowed (line 1, column 4)"),
        ("a: 1\n---\nb: 2\n", "frontmatter must be one YAML document, found more than one"),
        ("a: 1\n...\nb: 2\n", "frontmatter must be one YAML document, found more than one"),
    ],
)
def test_syntax_errors_and_several_documents_are_one_issue_with_a_place(text: str, issue: str) -> None:
    assert _refused(text) == [issue]


def test_a_lone_surrogate_escape_is_refused() -> None:
    assert _refused('a: "\\ud83d"\n') == [
        "a: a \\u escape names half a surrogate pair, not a character (line 1)"
    ]


def test_line_offset_points_into_the_whole_file() -> None:
    value, issues = parse_yaml("a: 1\na: 2\n", line_offset=1)
    assert (value, issues) == (None, [Issue("a", "duplicate key 'a' (line 3, first at line 2)")])


def test_every_issue_is_reported_at_once() -> None:
    assert _refused("a: !x 1\nb: .nan\nb: 2\n3: c\n") == [
        "a: tag '!x' is not a YAML core schema tag (line 1)",
        "b: '.nan' is not a finite number (line 2)",
        "b: duplicate key 'b' (line 3, first at line 2)",
        "key '3' is not a string (line 4)",
    ]


# parse_yaml: bounded work


def test_frontmatter_over_256_kib_is_refused_before_parsing() -> None:
    text = "a: " + "é" * (MAX_FRONTMATTER_BYTES // 2)
    assert len(text) < MAX_FRONTMATTER_BYTES
    assert _refused(text) == ["frontmatter is larger than 256 KiB"]


def test_billion_laughs_stops_at_the_node_budget() -> None:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    assert _refused("\n".join(lines) + "\n") == [
        "frontmatter expands to more than 100000 values (aliases count each time)"
    ]


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    assert _refused("a: &x [*x]\n") == ["a[0]: alias refers to a node that contains it (line 1)"]
    assert _refused("&m {k: *m}\n") == ["k: alias refers to a node that contains it (line 1)"]


def test_deep_nesting_is_refused() -> None:
    assert _refused("a: " + "[" * 70 + "]" * 70 + "\n") == [
        "frontmatter nests deeper than 64 levels (line 1)"
    ]


def test_deep_nesting_through_aliases_is_refused() -> None:
    text = "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 70))
    assert _refused(text) == [f"a63{'[0]' * 64}: nesting deeper than 64 levels (line 1)"]


# parse_document


def test_parse_document_gives_the_frontmatter_mapping_and_the_body() -> None:
    text = "---\nname: a\ninputs: {n: number}\n---\n# A\n"
    assert parse_document(text) == ParsedDocument({"name": "a", "inputs": {"n": "number"}}, "# A\n", ())


def test_parse_document_reports_lines_of_the_whole_file() -> None:
    assert parse_document("---\nname: a\nname: b\n---\nbody\n") == ParsedDocument(
        None, "body\n", (Issue("name", "duplicate key 'name' (line 3, first at line 2)"),)
    )


def test_parse_document_without_frontmatter() -> None:
    assert parse_document("# Only a body\n") == ParsedDocument(None, None, (NOT_OPENED,))


@pytest.mark.parametrize("frontmatter", ["", "- a\n", "just text\n", "42\n", "~\n"])
def test_frontmatter_must_be_a_mapping(frontmatter: str) -> None:
    assert parse_document(f"---\n{frontmatter}---\nbody") == ParsedDocument(
        None, "body", (Issue("", "frontmatter must be a mapping"),)
    )


def test_every_conformance_fixture_parses_cleanly() -> None:
    paths = sorted(FIXTURES.glob("*/PROCESS.md"))
    assert len(paths) == 12
    for path in paths:
        parsed = parse_document(path.read_text(encoding="utf-8"))
        assert parsed.issues == (), path
        assert parsed.frontmatter is not None
        assert parsed.frontmatter["name"] == path.parent.name
        assert _plain_json(parsed.frontmatter)


# Robustness: nothing raises, whatever the input

YAML_TOKENS = [
    "&a ",
    "*a",
    "!!str ",
    "!!int ",
    "!!map ",
    "! ",
    "<<: ",
    "\\ud83d",
    "%YAML 1.2\n",
    "%TAG ! !x\n",
    ".inf",
]
YAML_PIECES = st.sampled_from(
    [*"ab01:-?[]{},&*!|>'\"#%@`~.\\ \t\n", "---\n", "...\n", "  ", "\r\n", "é", "\x00", *YAML_TOKENS]
)
yamlish_text = st.lists(YAML_PIECES, max_size=80).map("".join)


def _check_result(parsed: ParsedDocument) -> None:
    assert all(isinstance(issue, Issue) for issue in parsed.issues)
    if parsed.issues:
        assert parsed.frontmatter is None
    else:
        assert isinstance(parsed.frontmatter, dict)
        assert _plain_json(parsed.frontmatter)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_arbitrary_text_always_gives_a_result(text: str) -> None:
    _check_result(parse_document(text))


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(yamlish_text, st.text(max_size=20))
def test_arbitrary_yamlish_frontmatter_always_gives_a_result(frontmatter: str, body: str) -> None:
    parsed = parse_document(f"---\n{frontmatter}\n---\n{body}")
    _check_result(parsed)


# Round trip: JSON-like values written as YAML come back equal

YAML_PRINTABLE = st.characters(
    codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="\ufeff\ufffe\uffff"
) | st.sampled_from("\t\n")
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53 - 1), 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(YAML_PRINTABLE, max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(YAML_PRINTABLE, max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def _flow(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _block(value: Any, indent: int = 0) -> str:
    """Block-style YAML with JSON scalars: exercises indentation, `- ` entries and `key:` lines."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        return "".join(f"{pad}{_flow(k)}:{_child(v, indent)}" for k, v in value.items())
    if isinstance(value, list) and value:
        return "".join(f"{pad}-{_child(v, indent)}" for v in value)
    return f"{pad}{_flow(value)}\n"


def _child(value: Any, indent: int) -> str:
    if isinstance(value, dict | list) and value:
        return "\n" + _block(value, indent + 2)
    return f" {_flow(value)}\n"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_json_values_round_trip_through_flow_and_block_yaml(value: Any) -> None:
    assert parse_yaml(_flow(value)) == (value, [])
    assert parse_yaml(_block(value)) == (value, [])
