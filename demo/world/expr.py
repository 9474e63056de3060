"""The little expression language of the demo's relations file (sample_processes/demo-relations.toml).

A relation says how one field's value follows from the run: `min(inputs.requestedAmount, orderTotal)`,
`not eligible`, `inputs.reason in ('damaged', 'wrong_item')`, `now + days(3)`. Expressions are
Python syntax, parsed with `ast` and evaluated by walking the tree, so only what is listed here can
run: names and dotted paths into the run's data, literals, arithmetic, comparisons, `and`/`or`/`not`,
`x if c else y`, and the functions in `FUNCTIONS`. Nothing is `eval`ed.

A path is read from the scene: `inputs.x` and `steps.<id>.output.x` from the run data, a bare name from
the output being drafted (its sibling fields), then the run's inputs; `now` is the scene's time. A
path through a list maps over it (`recordsFound.recordCount` is every item's count). A value that is
not there is None; arithmetic or an order comparison with None is None, and a condition that is None
does not hold. Text that reads as an RFC 3339 date or timestamp is a date or a datetime, so dates
compare and add as dates.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$")
CONSTANTS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class ExprError(ValueError):
    """An expression that cannot be parsed, or uses something the language does not offer."""


def as_time(value: Any) -> Any:
    """Wire text of a date or timestamp as a date or an aware datetime; anything else as it is."""
    if isinstance(value, str):
        if _DATE.match(value):
            return date.fromisoformat(value)
        if _DATETIME.match(value):
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value


def _comparable(a: Any, b: Any) -> tuple[Any, Any]:
    """A date beside a datetime is that day's midnight (UTC), so the two compare."""
    if isinstance(a, date) and not isinstance(a, datetime) and isinstance(b, datetime):
        a = datetime(a.year, a.month, a.day, tzinfo=UTC)
    if isinstance(b, date) and not isinstance(b, datetime) and isinstance(a, datetime):
        b = datetime(b.year, b.month, b.day, tzinfo=UTC)
    return a, b


def _first_name(text: Any) -> str | None:
    """`priya.shah@example.org` or `Priya Shah`: Priya."""
    if not isinstance(text, str) or not text:
        return None
    local = text.split("@")[0]
    first = re.split(r"[._\s-]+", local.strip())[0]
    return first[:1].upper() + first[1:].lower() if first else None


def _name_of(text: Any) -> str | None:
    """`priya.shah@example.org`: Priya Shah; a name stays as it is."""
    if not isinstance(text, str) or not text:
        return None
    if "@" not in text:
        return text
    parts = [p for p in re.split(r"[._-]+", text.split("@")[0]) if p]
    return " ".join(p[:1].upper() + p[1:].lower() for p in parts)


def _email_of(name: Any, domain: Any = "example.com") -> str | None:
    """`Jordan Lee`, `example.com`: jordan.lee@example.com."""
    if not isinstance(name, str) or not name.strip():
        return None
    local = ".".join(re.sub(r"[^a-z]", "", w.lower()) for w in name.split())
    return f"{local.strip('.')}@{domain}"


def _days(n: Any) -> timedelta | None:
    return None if n is None else timedelta(days=float(n))


def _hours(n: Any) -> timedelta | None:
    return None if n is None else timedelta(hours=float(n))


def _minutes(n: Any) -> timedelta | None:
    return None if n is None else timedelta(minutes=float(n))


def _previous_version(tag: Any) -> str | None:
    """`v2.14.0`: v2.13.0; `v2.0.3`: v2.0.2; what a release before it was tagged, plausibly."""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)$", tag) if isinstance(tag, str) else None
    if match is None:
        return None
    major, minor, patch = (int(g) for g in match.groups())
    if minor > 0:
        return f"v{major}.{minor - 1}.0"
    if patch > 0:
        return f"v{major}.{minor}.{patch - 1}"
    return f"v{max(major - 1, 0)}.9.0"


def _money(x: Any) -> str | None:
    """1234.5: 1,234.50."""
    return None if not isinstance(x, int | float) or isinstance(x, bool) else f"{x:,.2f}"


def _date_of(x: Any) -> date | None:
    x = as_time(x)
    if isinstance(x, datetime):
        return x.astimezone(UTC).date()
    return x if isinstance(x, date) else None


def _has(x: Any) -> bool:
    return x is not None and x != [] and x != ""


def _total(values: Any) -> float | int | None:
    if not isinstance(values, list):
        return None
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(numbers) if numbers else 0


def _dot(a: Any, b: Any) -> float | int | None:
    """Sum of pairwise products: `dot(lineItems.quantity, lineItems.unitPrice)` is the order total."""
    if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
        return None
    total: float | int = sum(x * y for x, y in zip(a, b, strict=True))
    return total


def _year(x: Any) -> int | None:
    day = _date_of(x)
    return None if day is None else day.year


def _nonnull(*values: Any) -> list[Any]:
    flat: list[Any] = []
    for v in values:
        flat.extend(v if isinstance(v, list) else [v])
    return [v for v in flat if v is not None]


def _min(*values: Any) -> Any:
    found = _nonnull(*values)
    return min(found) if found else None


def _max(*values: Any) -> Any:
    found = _nonnull(*values)
    return max(found) if found else None


def _round(x: Any, digits: Any = 0) -> Any:
    if not isinstance(x, int | float) or isinstance(x, bool):
        return None
    return round(x, int(digits)) if digits else round(x)


def _count(x: Any) -> int:
    return len(x) if isinstance(x, list | str) else 0


def _join(x: Any, sep: Any = ", ") -> str:
    return sep.join(str(v) for v in x) if isinstance(x, list) else ("" if x is None else str(x))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": _min,
    "max": _max,
    "round": _round,
    "sum": _total,
    "dot": _dot,
    "year": _year,
    "len": _count,
    "has": _has,
    "days": _days,
    "hours": _hours,
    "minutes": _minutes,
    "previous_version": _previous_version,
    "date": _date_of,
    "money": _money,
    "join": _join,
    "first_name": _first_name,
    "name_of": _name_of,
    "email_of": _email_of,
}
"""What an expression may call besides the scene's own functions (`SCENE_FUNCTIONS`)."""

SCENE_FUNCTIONS = frozenset({"policy", "digits", "letters", "alnum", "hex", "pick", "randint", "uniform"})
"""Functions of the scene: the process body's policy line, and draws from the field's own seeded
random source (see scene.py)."""
DRAWS = SCENE_FUNCTIONS - {"policy"}


def _add(a: Any, b: Any) -> Any:
    """Numbers, dates and lists add; with a text on either side the two join as text."""
    if isinstance(a, str) or isinstance(b, str):
        return f"{a}{b}"
    return operator.add(a, b)


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: _add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b if isinstance(b, list | tuple | str) else False,
    ast.NotIn: lambda a, b: a not in b if isinstance(b, list | tuple | str) else True,
}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class Resolver:
    """Where an expression reads its paths and scene functions (see scene.py)."""

    def path(self, parts: tuple[str, ...]) -> Any:
        raise NotImplementedError

    def call(self, name: str, args: list[Any]) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Expr:
    text: str
    tree: ast.Expression
    paths: tuple[tuple[str, ...], ...]
    """Every path the expression reads, for ordering fields after those they depend on."""
    calls: frozenset[str] = frozenset()
    """The functions it calls."""

    @classmethod
    def parse(cls, text: str) -> Expr:
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ExprError(f"{text!r}: not an expression ({exc.msg})") from None
        paths: list[tuple[str, ...]] = []
        calls: set[str] = set()
        _check(tree.body, text, paths, calls)
        return cls(text, tree, tuple(paths), frozenset(calls))

    @property
    def draws(self) -> bool:
        """Whether it draws from the field's random source (its value is not a function of the run)."""
        return bool(self.calls & DRAWS)

    def names(self) -> set[str]:
        """The bare names it reads: sibling fields of the output being drafted."""
        return {p[0] for p in self.paths if len(p) == 1}

    def inputs(self) -> set[str]:
        """The run inputs it reads (`inputs.x`): siblings while the inputs themselves are drafted."""
        return {p[1] for p in self.paths if len(p) >= 2 and p[0] == "inputs"}

    def evaluate(self, resolver: Resolver) -> Any:
        return _eval(self.tree.body, resolver)

    def holds(self, resolver: Resolver) -> bool:
        """A condition: true only when it evaluates to True (None and errors do not hold)."""
        return self.evaluate(resolver) is True


def path_of(node: ast.AST) -> tuple[str, ...] | None:
    """`steps.verify_order.output.orderTotal` as its parts; None for anything but a dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


def _check(node: ast.AST, text: str, paths: list[tuple[str, ...]], calls: set[str]) -> None:
    """Refuse anything the language does not offer, naming it; collect the paths read."""
    if isinstance(node, ast.Name | ast.Attribute):
        path = path_of(node)
        if path is None:
            raise ExprError(f"{text!r}: only dotted names may be read")
        if path[0] not in CONSTANTS:
            paths.append(path)
        return
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, str | int | float | bool | type(None)):
            raise ExprError(f"{text!r}: literal {node.value!r} is not a string, number or boolean")
        return
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS and name not in SCENE_FUNCTIONS:
            known = ", ".join(sorted({*FUNCTIONS, *SCENE_FUNCTIONS}))
            raise ExprError(f"{text!r}: unknown function {ast.unparse(node.func)!r} (known: {known})")
        if node.keywords:
            raise ExprError(f"{text!r}: {name}() takes no keyword arguments")
        calls.add(name)
        children: list[ast.AST] = list(node.args)
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        children = [node.left, node.right]
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        children = [node.operand]
    elif isinstance(node, ast.BoolOp):
        children = list(node.values)
    elif isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        children = [node.left, *node.comparators]
    elif isinstance(node, ast.IfExp):
        children = [node.test, node.body, node.orelse]
    elif isinstance(node, ast.Tuple | ast.List):
        children = list(node.elts)
    else:
        raise ExprError(f"{text!r}: {type(node).__name__} is not allowed")
    for child in children:
        _check(child, text, paths, calls)


def _eval(node: ast.AST, r: Resolver) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name | ast.Attribute):
        path = path_of(node)
        assert path is not None
        if len(path) == 1 and path[0] in CONSTANTS:
            return CONSTANTS[path[0]]
        return as_time(r.path(path))
    if isinstance(node, ast.Tuple | ast.List):
        return [_eval(e, r) for e in node.elts]
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        args = [_eval(a, r) for a in node.args]
        if node.func.id in SCENE_FUNCTIONS:
            return r.call(node.func.id, args)
        return _safely(FUNCTIONS[node.func.id], *args)
    if isinstance(node, ast.BinOp):
        left, right = _comparable(_eval(node.left, r), _eval(node.right, r))
        if left is None or right is None:
            return None
        return _safely(_BINARY[type(node.op)], left, right)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, r)
        if isinstance(node.op, ast.Not):
            return not value
        return None if not isinstance(value, int | float) else -value
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, r) for v in node.values)
        if isinstance(node.op, ast.And):
            return all(v is True or (v not in (None, False) and bool(v)) for v in values)
        return any(v is True or (v not in (None, False) and bool(v)) for v in values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, r)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, r)
            a, b = _comparable(left, right)
            if isinstance(op, _ORDERING) and (a is None or b is None):
                return None
            if not _safely(_COMPARE[type(op)], a, b):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, r) if _eval(node.test, r) is True else _eval(node.orelse, r)
    raise ExprError(f"{type(node).__name__} is not allowed")


def _safely(fn: Callable[..., Any], *args: Any) -> Any:
    """A type mismatch (text plus a number, a date beside a count) is None, not a crash."""
    try:
        return fn(*args)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None


def render(template: str, resolver: Resolver, fmt: Callable[[Any], str]) -> str:
    """`{expr}` placeholders of a template filled in; `{{` and `}}` are literal braces."""
    return "".join(
        part if isinstance(part, str) else fmt(part.evaluate(resolver)) for part in _pieces(template)
    )


def placeholders(template: str) -> list[Expr]:
    """The expressions a template fills in, parsed (so a bad one is refused when the file loads)."""
    return [part for part in _pieces(template) if isinstance(part, Expr)]


@functools.lru_cache(maxsize=1024)
def _pieces(template: str) -> tuple[str | Expr, ...]:
    """A template as literal text and parsed placeholders, in order."""
    pieces: list[str | Expr] = []
    literal: list[str] = []
    i = 0
    while i < len(template):
        ch = template[i]
        if ch in "{}" and template[i : i + 2] == ch * 2:
            literal.append(ch)
            i += 2
        elif ch == "{":
            close = template.find("}", i)
            if close < 0:
                raise ExprError(f"{template!r}: a '{{' is never closed")
            pieces.append("".join(literal))
            literal = []
            pieces.append(Expr.parse(template[i + 1 : close]))
            i = close + 1
        elif ch == "}":
            raise ExprError(f"{template!r}: a '}}' without its '{{' (write '}}}}' for a brace)")
        else:
            literal.append(ch)
            i += 1
    pieces.append("".join(literal))
    return tuple(p for p in pieces if p != "")


def lookup(data: Mapping[str, Any], parts: tuple[str, ...]) -> Any:
    """`parts` read from nested dicts, mapping over lists; None when a part is not there."""
    value: Any = data
    for i, part in enumerate(parts):
        if isinstance(value, list):
            return [v for item in value if (v := lookup({"_": item}, ("_", *parts[i:]))) is not None]
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value
