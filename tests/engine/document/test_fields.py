"""Field declarations and value checking: one code path for inputs, outputs and event data."""

import math
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.document.fields import check_values, is_date, parse_datetime, parse_fields
from engine.document.model import FIELD_TYPES, Field, Issue

TYPES = ", ".join(FIELD_TYPES)


def _fields(declared: dict[str, Any]) -> tuple[Field, ...]:
    fields, issues = parse_fields(declared, "output")
    assert issues == []
    return fields


def _issues(declared: dict[str, Any], values: Any) -> list[str]:
    return [str(issue) for issue in check_values(_fields(declared), values, "output")]


# parse_fields


def test_type_names_and_field_objects_become_fields_keeping_the_declaration() -> None:
    amount = {"type": "number", "description": "Expected annual spend in USD"}
    kind = {"type": "string", "one_of": ["a", "b"], "optional": True}
    tags = {"type": "list", "items": {"type": "string", "one_of": ["x"]}}
    fields, issues = parse_fields(
        {"vendorName": "string", "amount": amount, "kind": kind, "tags": tags}, "inputs"
    )
    assert issues == []
    assert fields == (
        Field(name="vendorName", type="string", declared="string"),
        Field(name="amount", type="number", description="Expected annual spend in USD", declared=amount),
        Field(name="kind", type="string", optional=True, one_of=("a", "b"), declared=kind),
        Field(
            name="tags",
            type="list",
            items=Field(name="tags[]", type="string", one_of=("x",), declared=tags["items"]),
            declared=tags,
        ),
    )
    assert fields[1].declared is amount


def test_an_empty_mapping_declares_no_fields() -> None:
    assert parse_fields({}, "inputs") == ((), [])


@pytest.mark.parametrize("declared", [None, [], "string", 3])
def test_declarations_must_be_a_mapping(declared: Any) -> None:
    assert parse_fields(declared, "inputs") == (
        (),
        [Issue("inputs", "expected a mapping of field names to types")],
    )


@pytest.mark.parametrize(
    ("declaration", "issues"),
    [
        ("strng", [f"inputs.x: unknown type 'strng'; the types are {TYPES}"]),
        (5, ["inputs.x: expected a type name or a field object"]),
        (None, ["inputs.x: expected a type name or a field object"]),
        ({}, ["inputs.x.type: missing"]),
        ({"type": "Number"}, [f"inputs.x.type: unknown type 'Number'; the types are {TYPES}"]),
        ({"type": None}, [f"inputs.x.type: unknown type null; the types are {TYPES}"]),
        ({"type": "string", "descripton": "d"}, ["inputs.x.descripton: unknown key"]),
        ({"type": "string", "description": 5}, ["inputs.x.description: expected string"]),
        ({"type": "string", "description": None}, ["inputs.x.description: expected string"]),
        ({"type": "string", "optional": "yes"}, ["inputs.x.optional: must be true or false"]),
        ({"type": "string", "optional": None}, ["inputs.x.optional: must be true or false"]),
        ({"type": "string", "one_of": []}, ["inputs.x.one_of: expected a non-empty list"]),
        ({"type": "string", "one_of": "a"}, ["inputs.x.one_of: expected a non-empty list"]),
        (
            {"type": "number", "one_of": [1, "2", True, None, 2.5]},
            [
                "inputs.x.one_of[1]: expected number",
                "inputs.x.one_of[2]: expected number",
                "inputs.x.one_of[3]: null is not a value",
            ],
        ),
        ({"type": "boolean", "one_of": [True, 0]}, ["inputs.x.one_of[1]: expected boolean"]),
        (
            {"type": "date", "one_of": ["2026-01-01", "2026-02-30"]},
            ["inputs.x.one_of[1]: expected date (YYYY-MM-DD, a real calendar date)"],
        ),
        (
            {"type": "list", "one_of": ["a"]},
            ["inputs.x.one_of: allowed only on string, number, boolean, date, datetime and person fields"],
        ),
        (
            {"type": "object", "one_of": ["a"]},
            ["inputs.x.one_of: allowed only on string, number, boolean, date, datetime and person fields"],
        ),
        ({"type": "string", "items": "string"}, ["inputs.x.items: allowed only on a list field"]),
        (
            {"type": "list", "items": "strings"},
            [f"inputs.x.items: unknown type 'strings'; the types are {TYPES}"],
        ),
        ({"type": "list", "items": 1}, ["inputs.x.items: expected a type name or a field object"]),
        (
            {"type": "list", "items": {"type": "list", "items": {"type": "string", "one_of": [1]}}},
            ["inputs.x.items.items.one_of[0]: expected string"],
        ),
        (
            {"type": "strng", "optional": 1, "extra": True},
            [
                "inputs.x.extra: unknown key",
                f"inputs.x.type: unknown type 'strng'; the types are {TYPES}",
                "inputs.x.optional: must be true or false",
            ],
        ),
    ],
)
def test_bad_declarations_are_refused_with_their_path(declaration: Any, issues: list[str]) -> None:
    fields, found = parse_fields({"x": declaration, "ok": "string"}, "inputs")
    assert [str(issue) for issue in found] == issues
    assert fields == (Field(name="ok", type="string", declared="string"),)


def test_the_caller_gives_the_path_prefix() -> None:
    _, issues = parse_fields({"x": {"type": "string", "one_of": ["a", 2]}}, "steps.check_vendor.output")
    assert issues == [Issue("steps.check_vendor.output.x.one_of[1]", "expected string")]


def test_an_empty_field_name_is_refused() -> None:
    assert parse_fields({"": "string"}, "inputs") == (
        (),
        [Issue("inputs", "field name '' must be a non-empty string")],
    )


@pytest.mark.parametrize("type_name", ["string", "date", "datetime", "person"])
def test_one_of_values_have_the_field_type(type_name: str) -> None:
    good = {
        "string": "a",
        "date": "2026-10-06",
        "datetime": "2026-10-06T09:00:00Z",
        "person": "ana@example.com",
    }
    fields, issues = parse_fields({"x": {"type": type_name, "one_of": [good[type_name]]}}, "inputs")
    assert issues == []
    assert fields[0].one_of == (good[type_name],)


# check_values: the exact issues


DECLARED = {
    "amount": "number",
    "summary": "string",
    "kind": {"type": "string", "one_of": ["a", "b"]},
    "tags": {"type": "list", "items": "string"},
    "x": "string",
    "note": {"type": "string", "optional": True},
}


def test_every_issue_at_once_in_declared_order_then_undeclared() -> None:
    values = {"extra": 1, "x": None, "kind": "x", "tags": ["a", "b", 3], "amount": "12"}
    assert _issues(DECLARED, values) == [
        "output.amount: expected number",
        "output.summary: missing",
        "output.kind: 'x' is not one of 'a', 'b'",
        "output.tags[2]: expected string",
        "output.x: null is not a value",
        "output.extra: not declared",
    ]


def test_valid_values_have_no_issues_and_optional_fields_may_be_omitted() -> None:
    values = {"amount": 48000, "summary": "", "kind": "b", "tags": [], "x": "y"}
    assert _issues(DECLARED, values) == []


def test_an_optional_field_given_as_null_is_refused() -> None:
    values = {"amount": 1, "summary": "s", "kind": "a", "tags": [], "x": "y", "note": None}
    assert _issues(DECLARED, values) == ["output.note: null is not a value"]


@pytest.mark.parametrize("values", [None, [], "x", 1, True])
def test_values_that_are_not_an_object_are_one_issue(values: Any) -> None:
    assert check_values(_fields(DECLARED), values, "output") == [Issue("output", "expected object")]


def test_no_fields_refuse_every_value() -> None:
    assert check_values((), {"a": 1, "b": 2}, "data") == [
        Issue("data.a", "not declared"),
        Issue("data.b", "not declared"),
    ]
    assert check_values((), {}, "data") == []


@pytest.mark.parametrize(
    ("type_name", "good", "bad"),
    [
        ("string", ["", "text", "2026-10-06"], [1, True, ["a"], {"a": 1}]),
        (
            "number",
            [0, -3, 1.5, 10**30, 2**53 + 1, -0.0],
            [True, False, "1", math.nan, math.inf, -math.inf, [1]],
        ),
        ("boolean", [True, False], [1, 0, "true", "yes"]),
        (
            "date",
            ["2026-10-06", "2024-02-29", "0001-01-01", "9999-12-31"],
            [
                "2026-02-30",
                "2025-02-29",
                "2026-13-01",
                "2026-10-6",
                "26-10-06",
                "2026-10-06T00:00:00Z",
                "٢٠٢٦-10-06",
                20261006,
                "2026/10/06",
                "0000-01-01",
                "2026-10-06\n",
            ],
        ),
        (
            "datetime",
            [
                "2026-10-06T09:04:12Z",
                "2026-10-06t09:04:12z",
                "2026-10-06T09:04:12.5+05:30",
                "2026-10-06T23:59:59-00:00",
                "2026-10-06T09:04:12.123456789-12:00",
            ],
            [
                "2026-10-06T09:04:12",
                "2026-10-06 09:04:12Z",
                "2026-10-06",
                "2026-10-06T24:00:00Z",
                "2026-10-06T09:04:60Z",
                "2026-02-30T09:04:12Z",
                "2026-10-06T09:04:12+24:00",
                "2026-10-06T09:04:12+05:60",
                "2026-10-06T09:04:12+0530",
                "2026-10-06T9:04:12Z",
                1760000000,
            ],
        ),
        ("list", [[], [1, "a", None, {}]], [{}, "a", 1]),
        ("object", [{}, {"a": [1, None]}], [[], "a", 1]),
        (
            "person",
            ["ana@example.com", "first.last+tag@mail.example.org"],
            [
                "ana",
                "ana@example",
                "a b@example.com",
                "@example.com",
                "ana@@example.com",
                "ana@example.com ",
                5,
                "a" * 250 + "@example.com",
            ],
        ),
    ],
)
def test_each_type_accepts_its_values_and_refuses_others(
    type_name: str, good: list[Any], bad: list[Any]
) -> None:
    fields = _fields({"v": type_name})
    for value in good:
        assert check_values(fields, {"v": value}, "output") == [], value
    expected = {
        "string": "expected string",
        "number": "expected number",
        "boolean": "expected boolean",
        "date": "expected date (YYYY-MM-DD, a real calendar date)",
        "datetime": "expected datetime (RFC 3339 with an offset)",
        "list": "expected list",
        "object": "expected object",
        "person": "expected person (an email address)",
    }[type_name]
    for value in bad:
        assert check_values(fields, {"v": value}, "output") == [Issue("output.v", expected)], value


def test_one_of_compares_exactly_without_rounding_and_keeps_booleans_apart() -> None:
    numbers = {"n": {"type": "number", "one_of": [0.3, 1]}}
    assert _issues(numbers, {"n": 0.1 + 0.2}) == ["output.n: 0.30000000000000004 is not one of 0.3, 1"]
    assert _issues(numbers, {"n": 1.0}) == []
    assert _issues(numbers, {"n": True}) == ["output.n: expected number"]
    flags = {"f": {"type": "boolean", "one_of": [True]}}
    assert _issues(flags, {"f": False}) == ["output.f: false is not one of true"]


def test_a_long_value_is_cut_in_the_issue() -> None:
    assert _issues({"k": {"type": "string", "one_of": ["a"]}}, {"k": "x" * 100}) == [
        f"output.k: '{'x' * 59}…' is not one of 'a'"
    ]


def test_list_items_are_checked_recursively_with_indexed_paths() -> None:
    declared = {
        "matrix": {"type": "list", "items": {"type": "list", "items": {"type": "string", "one_of": ["a"]}}},
        "lines": {"type": "list", "items": "object"},
    }
    values = {"matrix": [["a", "b"], "x", [None]], "lines": [{"amount": 1}, 2]}
    assert _issues(declared, values) == [
        "output.matrix[0][1]: 'b' is not one of 'a'",
        "output.matrix[1]: expected list",
        "output.matrix[2][0]: null is not a value",
        "output.lines[1]: expected object",
    ]


# is_date and parse_datetime


def test_is_date() -> None:
    assert is_date("2024-02-29")
    assert not is_date("2026-02-30")
    assert not is_date(None)


def test_parse_datetime_gives_an_aware_datetime() -> None:
    assert parse_datetime("2026-10-06T09:04:12Z") == datetime(2026, 10, 6, 9, 4, 12, tzinfo=UTC)
    parsed = parse_datetime("2026-10-06T09:04:12.25-05:30")
    assert parsed == datetime(2026, 10, 6, 9, 4, 12, 250000, tzinfo=timezone(-timedelta(hours=5, minutes=30)))
    assert parsed is not None and parsed.utcoffset() == -timedelta(hours=5, minutes=30)
    assert parse_datetime("2026-10-06T09:04:12") is None
    assert parse_datetime(None) is None


# Properties

offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
aware = st.datetimes(timezones=offsets)


@given(st.dates())
def test_every_calendar_date_is_accepted(day: date) -> None:
    assert is_date(day.isoformat())


@given(aware)
def test_every_aware_datetime_round_trips(moment: datetime) -> None:
    parsed = parse_datetime(moment.isoformat())
    assert parsed == moment
    assert parsed is not None and parsed.utcoffset() == moment.utcoffset()


json_leaf = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
json_any = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
numbers = st.integers() | st.floats(allow_nan=False, allow_infinity=False)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(),
    "number": numbers,
    "boolean": st.booleans(),
    "date": st.dates().map(date.isoformat),
    "datetime": aware.map(datetime.isoformat),
    "list": st.lists(json_any, max_size=3),
    "object": st.dictionaries(st.text(), json_any, max_size=3),
    "person": st.from_regex(r"[a-z0-9._+-]{1,20}@[a-z0-9-]{1,20}\.[a-z]{2,6}", fullmatch=True),
}


@st.composite
def declared_with_values(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    declared: dict[str, Any] = {}
    values: dict[str, Any] = {}
    for name in draw(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=5)):
        type_name = draw(st.sampled_from(FIELD_TYPES))
        optional = draw(st.booleans())
        if type_name == "list" and draw(st.booleans()):
            item_type = draw(st.sampled_from(FIELD_TYPES))
            declared[name] = {"type": "list", "items": item_type, "optional": optional}
            value = draw(st.lists(VALUES[item_type], max_size=3))
        elif type_name not in ("list", "object") and draw(st.booleans()):
            choices = draw(st.lists(VALUES[type_name], min_size=1, max_size=3))
            declared[name] = {"type": type_name, "one_of": choices, "optional": optional}
            value = draw(st.sampled_from(choices))
        else:
            declared[name] = {"type": type_name, "optional": optional}
            value = draw(VALUES[type_name])
        if not optional or draw(st.booleans()):
            values[name] = value
    return declared, values


@settings(deadline=None)
@given(declared_with_values())
def test_valid_values_are_always_accepted(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    declared, values = case
    fields, issues = parse_fields(declared, "output")
    assert issues == []
    assert check_values(fields, values, "output") == []


@given(numbers)
def test_numbers_are_accepted_as_given_never_rounded(number: float) -> None:
    values = {"n": number}
    assert check_values(_fields({"n": "number"}), values, "output") == []
    assert values["n"] is number
    assert _issues({"n": {"type": "number", "one_of": [number]}}, {"n": number}) == []
