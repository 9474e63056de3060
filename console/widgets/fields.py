"""Form editors generated from declared fields (spec §2.3): one widget per type, values as JSON.

The editors only turn what was typed into JSON values; whether those values are acceptable is decided
by `engine.document.fields.check_values`, the rule the engine itself applies, so the form and the
server refuse the same things with the same words.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping, Sequence
from typing import Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, Static, TextArea

from console.client.wire import FieldSpec, FieldType, Json
from console.widgets.toggles import GlyphCheckbox
from engine.document.fields import check_values, parse_fields, show
from engine.document.model import Field, Issue


class _Missing(enum.Enum):
    MISSING = "missing"


MISSING: Literal[_Missing.MISSING] = _Missing.MISSING
"""An editor left empty: the field is omitted (and `check_values` reports it if it is required)."""

Value = Json | Literal[_Missing.MISSING]
"""What an editor holds: a JSON value, or nothing."""

PLACEHOLDERS = {
    "string": "text",
    "number": "a number, e.g. 48000 or 0.5",
    "date": "YYYY-MM-DD",
    "datetime": "YYYY-MM-DDTHH:MM:SSZ",
    "person": "email address",
}


EXAMPLES: dict[str, Json] = {
    "string": "text",
    "number": 0,
    "boolean": False,
    "date": "2026-01-31",
    "datetime": "2026-01-31T09:00:00Z",
    "person": "name@example.com",
    "object": {},
}
THOUSANDS = re.compile(r"[+-]?\d{1,3}([,_ ']\d{3})+(\.\d+)?")
"""`1,200` or `1 200`: a number written with separators, which JSON (and so the protocol) does not read."""


def template(field: Field) -> str:
    """The shape a list or object field takes, as JSON to start from: `["text"]`, `{}`."""
    if field.type == "list":
        item = field.items
        example = template(item) if item is not None and item.type in ("list", "object") else None
        shown = example or json.dumps(EXAMPLES.get(item.type if item else "string", "text"))
        return f"[{shown}]"
    return "{}"


def number_issue(path: str, text: str) -> Issue:
    if THOUSANDS.fullmatch(text):
        plain = re.sub(r"[,_ ']", "", text)
        return Issue(path, f"write the number without separators: {plain}, not {text}")
    return Issue(path, "expected number, written like 1200 or 0.5")


def declared_fields(declared: Mapping[str, FieldType | FieldSpec] | None, path: str) -> tuple[Field, ...]:
    """Fields from the wire form a work item or `list_processes` gives; unusable declarations are skipped."""
    fields, _ = parse_fields(declared or {}, path)
    return fields


def _describe(field: Field) -> str:
    kind = f"list of {field.items.type}" if field.type == "list" and field.items else field.type
    parts = [kind]
    if field.optional:
        parts.append("optional")
    if field.description:
        parts.append(field.description)
    return " · ".join(parts)


class FieldEditor(Vertical):
    """A label, the widget for the field's type, and the field's issues under it."""

    DEFAULT_CSS = """
    FieldEditor { height: auto; margin-bottom: 1; }
    FieldEditor > .field-label { height: 1; }
    FieldEditor > TextArea { height: 5; }
    FieldEditor > .field-issues { color: $error; height: auto; }
    """

    def __init__(
        self, field: Field, *, people: Sequence[str] = (), initial: Value = MISSING, prefix: str = ""
    ) -> None:
        super().__init__(classes="field")
        self.field = field
        self.prefix = prefix
        self.people = list(people)
        self.initial = initial

    @property
    def input_id(self) -> str:
        """`field-<name>`, with characters a CSS id cannot hold replaced (field names are free text)."""
        return "field-" + re.sub(r"[^A-Za-z0-9_-]", "_", self.field.name)

    def compose(self) -> ComposeResult:
        field = self.field
        yield Label(
            Text.assemble((field.name, "bold"), "  ", (_describe(field), "dim")), classes="field-label"
        )
        initial = self.initial
        if field.one_of is not None:
            options = [
                (Text(show(choice) if not isinstance(choice, str) else choice), i)
                for i, choice in enumerate(field.one_of)
            ]
            chosen = (
                field.one_of.index(initial)
                if initial is not MISSING and initial in field.one_of
                else Select.NULL
            )
            yield Select(
                options, allow_blank=True, value=chosen, prompt="choose", id=self.input_id, compact=True
            )
        elif field.type == "boolean":
            yield GlyphCheckbox(
                "true when ticked",
                value=bool(initial) if initial is not MISSING else False,
                id=self.input_id,
                compact=True,
            )
        elif field.type in ("list", "object"):
            text = "" if initial is MISSING else json.dumps(initial, indent=2, ensure_ascii=False)
            yield TextArea(
                text, id=self.input_id, soft_wrap=True, placeholder=f"JSON, shaped like {template(field)}"
            )
        else:
            text = (
                ""
                if initial is MISSING
                else (json.dumps(initial) if field.type == "number" else str(initial))
            )
            suggester = SuggestFromList(self.people, case_sensitive=False) if field.type == "person" else None
            yield Input(
                text,
                placeholder=PLACEHOLDERS.get(field.type, ""),
                id=self.input_id,
                suggester=suggester,
                compact=True,
            )
        issues = Static("", classes="field-issues")
        issues.display = False
        yield issues

    def read(self) -> tuple[Value, list[Issue]]:
        """The value as JSON (or MISSING), plus issues about text that is not a value at all."""
        field, path = self.field, self.field.name
        widget = self.query_one(f"#{self.input_id}")
        if isinstance(widget, Select):
            chosen = widget.value  # the index of the choice in `one_of`, or Select.NULL
            return (
                field.one_of[chosen] if isinstance(chosen, int) and field.one_of is not None else MISSING
            ), []
        if isinstance(widget, Checkbox):
            return widget.value, []
        if isinstance(widget, TextArea):
            text = widget.text.strip()
            if not text:
                return MISSING, []
            try:
                return json.loads(text), []
            except json.JSONDecodeError as exc:
                shape = f"expected {_describe(field).split(' · ')[0]} as JSON, like {template(field)}"
                return MISSING, [Issue(path, f"{shape} ({exc.msg} at line {exc.lineno})")]
        assert isinstance(widget, Input)
        text = widget.value.strip()
        if not text:
            return MISSING, []
        if field.type == "number":
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                return MISSING, [number_issue(path, text)]
            return value, []
        return text, []

    def show_issues(self, issues: Sequence[str]) -> None:
        shown = self.query_one(".field-issues", Static)
        shown.update(Text("\n".join(issues)))
        shown.display = bool(issues)

    def issues(self) -> list[str]:
        """This field's issues as `collect` words them: unreadable text, else the engine's check."""
        value, unreadable = self.read()
        if unreadable:
            return [str(Issue(f"{self.prefix}.{i.path}", i.message)) for i in unreadable]
        values = {} if isinstance(value, _Missing) else {self.field.name: value}
        return [str(i) for i in check_values((self.field,), values, self.prefix)]

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _recheck(self) -> None:
        """An issue shown goes as soon as the field is fixed (new ones wait for the next send)."""
        if self.query_one(".field-issues", Static).display:
            self.show_issues(self.issues())


class FieldsForm(Vertical):
    """Editors for a set of declared fields; `collect` returns the values and every local issue."""

    DEFAULT_CSS = "FieldsForm { height: auto; }"

    def __init__(
        self,
        fields: Sequence[Field],
        prefix: str,
        *,
        people: Sequence[str] = (),
        initial: Mapping[str, Json] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.fields = tuple(fields)
        self.prefix = prefix
        self.people = people
        self.initial = initial or {}

    def compose(self) -> ComposeResult:
        if not self.fields:
            yield Static(Text("No fields.", style="dim"))
        for field in self.fields:
            yield FieldEditor(
                field, people=self.people, initial=self.initial.get(field.name, MISSING), prefix=self.prefix
            )

    def first_empty(self) -> Widget | None:
        """The widget of the first required field with nothing in it yet."""
        for editor in self.query(FieldEditor):
            value, _ = editor.read()
            if value is MISSING and not editor.field.optional:
                return editor.query_one(f"#{editor.input_id}")
        return None

    def collect(self) -> tuple[dict[str, Json], list[str]]:
        values: dict[str, Json] = {}
        parse_issues: list[Issue] = []
        for editor in self.query(FieldEditor):
            value, unreadable = editor.read()
            parse_issues.extend(Issue(f"{self.prefix}.{i.path}", i.message) for i in unreadable)
            if not isinstance(value, _Missing):
                values[editor.field.name] = value
        unparsed = {i.path for i in parse_issues}
        checked = [
            i for i in check_values(self.fields, values, self.prefix) if not _covered(i.path, unparsed)
        ]
        issues = [str(i) for i in parse_issues + checked]
        for editor in self.query(FieldEditor):
            mine = f"{self.prefix}.{editor.field.name}"
            editor.show_issues(
                [issue for issue in issues if issue.startswith((f"{mine}:", f"{mine}[", f"{mine}."))]
            )
        return values, issues


def _covered(path: str, unparsed: set[str]) -> bool:
    """A field whose text did not parse is reported once, not again as `missing`."""
    return path in unparsed
