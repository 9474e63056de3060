"""Field declarations (spec §2.3) and the values that must match them.

Inputs at start, outputs at submit and event data on delivery are all checked here, so a value is
accepted or refused the same way wherever it arrives, with every issue reported at once.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from engine.document.model import FIELD_TYPES, Field, Issue, is_field_type

_FIELD_KEYS = ("type", "description", "optional", "one_of", "items")
_NO_ONE_OF = ("list", "object")
"""`one_of` values have the field's type and are scalars (process-document schema), so not these."""

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))\Z"
)
_EMAIL = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+\Z")
_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)
MAX_EMAIL_LENGTH = 254
SHOWN_CHARS = 60
"""Values are untrusted: an issue quotes at most this much of one."""

EXPECTED = {
    "string": "expected string",
    "number": "expected number",
    "boolean": "expected boolean",
    "date": "expected date (YYYY-MM-DD, a real calendar date)",
    "datetime": "expected datetime (RFC 3339 with an offset)",
    "list": "expected list",
    "object": "expected object",
    "person": "expected person (an email address)",
}


def is_date(value: Any) -> bool:
    """`YYYY-MM-DD` naming a day that exists (`2026-02-30` does not); RFC 3339 writes years from 0000."""
    if not isinstance(value, str) or not (match := _DATE.match(value)):
        return False
    year, month, day = (int(part) for part in match.groups())
    return _is_day(year, month, day)


def parse_datetime(value: Any) -> datetime | None:
    """The instant an RFC 3339 datetime with `Z` or `±hh:mm` names, aware; None for anything else.

    Second 60 is the leap second RFC 3339 allows where one is inserted, at the end of a month in UTC.
    Python has no second 60, so `23:59:60` reads as the instant that second ends, the next second: what
    is due at it is due then. RFC 3339 writes years from 0000, Python's datetimes from 0001 to 9999, so
    an instant outside that (year 0000, or past 9999 once in UTC) reads as Python's first or last one.
    Digits past microseconds are dropped.
    """
    if not isinstance(value, str) or not (match := _DATETIME.match(value)):
        return None
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    fraction, zulu, sign, off_h, off_m = match.groups()[6:]
    offset = 0 if zulu else (int(off_h) * 60 + int(off_m)) * (-1 if sign == "-" else 1)
    if not _is_day(year, month, day) or hour > 23 or minute > 59 or second > 60:
        return None
    if not zulu and (int(off_h) > 23 or int(off_m) > 59):
        return None
    leap = second == 60
    if leap and not _ends_a_utc_month(year, month, day, hour * 60 + minute - offset):
        return None
    zone = UTC if zulu else timezone(timedelta(minutes=offset))
    micro = 0 if leap else int((fraction or "0")[:6].ljust(6, "0"))
    try:
        moment = datetime(year, month, day, hour, minute, 59 if leap else second, micro, zone)
        moment += timedelta(seconds=1 if leap else 0)
        moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return _FIRST if year <= 1 else _LAST
    return moment


def _is_day(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]


def _ends_a_utc_month(year: int, month: int, day: int, utc_minute: int) -> bool:
    """Whether the written day's minute `utc_minute` (its clock time less its offset, so it may fall on
    the day before or after) is the last minute of a month in UTC."""
    shift, minute_of_day = divmod(utc_minute, 24 * 60)
    if minute_of_day != 23 * 60 + 59:
        return False
    return day + shift == calendar.monthrange(year, month)[1] or (shift == -1 and day == 1)


def is_person(value: Any) -> bool:
    """The server's person format is `email` (describe)."""
    return isinstance(value, str) and len(value) <= MAX_EMAIL_LENGTH and bool(_EMAIL.match(value))


def is_number(value: Any) -> bool:
    """A JSON number: Python's bool is an int but never a number here, and nothing is coerced."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


_HAS_TYPE: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "number": is_number,
    "boolean": lambda value: isinstance(value, bool),
    "date": is_date,
    "datetime": lambda value: parse_datetime(value) is not None,
    "list": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
    "person": is_person,
}


def has_type(type_name: str, value: Any) -> bool:
    """Whether a non-null JSON value is of a field type."""
    return _HAS_TYPE[type_name](value)


def show(value: Any) -> str:
    """A value as an issue names it: strings quoted (long ones cut), booleans and null as JSON writes them."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return repr(value[: SHOWN_CHARS - 1] + "…")
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return repr(value)


def check_value(field: Field, value: Any, path: str) -> list[Issue]:
    """Issues for one present value, walking typed list items."""
    if value is None:
        return [Issue(path, "null is not a value")]
    if not has_type(field.type, value):
        return [Issue(path, EXPECTED[field.type])]
    if field.one_of is not None and not any(_same(value, choice) for choice in field.one_of):
        return [Issue(path, f"{show(value)} is not one of {', '.join(show(c) for c in field.one_of)}")]
    if field.items is not None:
        return [
            issue for i, item in enumerate(value) for issue in check_value(field.items, item, f"{path}[{i}]")
        ]
    return []


def check_values(fields: Sequence[Field], values: Any, prefix: str) -> list[Issue]:
    """Every issue of a set of values against declared fields: wrong type, missing, undeclared."""
    if not isinstance(values, dict):
        return [Issue(prefix, "expected object")]
    issues: list[Issue] = []
    names = {f.name for f in fields}
    for field in fields:
        path = _join(prefix, field.name)
        if field.name in values:
            issues.extend(check_value(field, values[field.name], path))
        elif not field.optional:
            issues.append(Issue(path, "missing"))
    issues.extend(Issue(_join(prefix, str(name)), "not declared") for name in values if name not in names)
    return issues


def parse_fields(declared: Any, path: str) -> tuple[tuple[Field, ...], list[Issue]]:
    """Fields from an `inputs` or `output` mapping; only declarations without issues become fields."""
    if not isinstance(declared, dict):
        return (), [Issue(path, "expected a mapping of field names to types")]
    fields: list[Field] = []
    issues: list[Issue] = []
    for name, declaration in declared.items():
        if not isinstance(name, str) or not name:
            issues.append(Issue(path, f"field name {show(name)} must be a non-empty string"))
            continue
        field, field_issues = parse_field(name, declaration, _join(path, name))
        issues.extend(field_issues)
        if field is not None:
            fields.append(field)
    return tuple(fields), issues


def parse_field(name: str, declaration: Any, path: str) -> tuple[Field | None, list[Issue]]:
    """One declaration: a type name, or `{type, description?, optional?, one_of?, items?}`."""
    if isinstance(declaration, str):
        if is_field_type(declaration):
            return Field(name=name, type=declaration, declared=declaration), []
        return None, [Issue(path, _unknown_type(declaration))]
    if not isinstance(declaration, dict):
        return None, [Issue(path, "expected a type name or a field object")]
    issues = [Issue(_join(path, str(key)), "unknown key") for key in declaration if key not in _FIELD_KEYS]
    type_name = declaration.get("type")
    if "type" not in declaration:
        issues.append(Issue(f"{path}.type", "missing"))
    elif type_name not in FIELD_TYPES:
        issues.append(Issue(f"{path}.type", _unknown_type(type_name)))
        type_name = None
    description = declaration.get("description")
    if "description" in declaration and not isinstance(description, str):
        issues.append(Issue(f"{path}.description", "expected string"))
    optional = declaration.get("optional", False)
    if not isinstance(optional, bool):
        issues.append(Issue(f"{path}.optional", "must be true or false"))
    items: Field | None = None
    if "items" in declaration:
        if type_name is not None and type_name != "list":
            issues.append(Issue(f"{path}.items", "allowed only on a list field"))
        else:
            items, item_issues = parse_field(f"{name}[]", declaration["items"], f"{path}.items")
            issues.extend(item_issues)
    one_of, one_of_issues = _parse_one_of(declaration, type_name, f"{path}.one_of")
    issues.extend(one_of_issues)
    if issues or type_name is None:
        return None, issues
    field = Field(
        name=name,
        type=type_name,
        description=description,
        optional=optional,
        one_of=one_of,
        items=items,
        declared=declaration,
    )
    return field, []


def _parse_one_of(
    declaration: dict[str, Any], type_name: str | None, path: str
) -> tuple[tuple[Any, ...] | None, list[Issue]]:
    if "one_of" not in declaration:
        return None, []
    choices = declaration["one_of"]
    if type_name in _NO_ONE_OF:
        return None, [
            Issue(path, "allowed only on string, number, boolean, date, datetime and person fields")
        ]
    if not isinstance(choices, list) or not choices:
        return None, [Issue(path, "expected a non-empty list")]
    if not is_field_type(type_name):
        return None, []
    probe = Field(name="", type=type_name)
    issues = [
        issue for i, choice in enumerate(choices) for issue in check_value(probe, choice, f"{path}[{i}]")
    ]
    return tuple(choices), issues


def _same(value: Any, choice: Any) -> bool:
    """Equality that keeps `true` apart from `1`, as JSON does."""
    return isinstance(value, bool) == isinstance(choice, bool) and value == choice


def _unknown_type(type_name: Any) -> str:
    return f"unknown type {show(type_name)}; the types are {', '.join(FIELD_TYPES)}"


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name
