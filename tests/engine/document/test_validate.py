"""The validator's model, its never-raise contract, `load`, `load_path` and durations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.document import (
    CHECK_PROFILE,
    MAX_DOCUMENT_BYTES,
    PARALLEL_PROFILE,
    CheckQuestion,
    Field,
    Issue,
    Route,
    Validated,
    content_hash,
    load,
    load_path,
    parse_document,
    parse_duration,
    validate,
)
from engine.document.durations import MAX_DURATION_SECONDS
from engine.document.step_rules import ALLOWED_KEYS

HEAD = "name: demo\ndescription: A demo process.\n"


def document(frontmatter: str, body: str = "Body.\n") -> str:
    return f"---\n{frontmatter}---\n{body}"


def frontmatter_of(text: str) -> Any:
    parsed = parse_document(document(text))
    assert parsed.issues == ()
    return parsed.frontmatter


ROUTING = (
    HEAD
    + """\
inputs:
  amount: number
  manager: { type: person, description: Who approves }
  payAt: datetime
steps:
  - id: intake
    agent: Read the request.
    output: { total: number }
    evidence: [file, link]
    due: 4h
  - id: triage
    person: initiator
    task: Choose the path.
    next:
      - review
      - { to: hold, when: Payment is pending }
  - id: review
    person: inputs.manager
    approve: Approve the total.
    on_reject: intake
    next: pay_time
  - id: hold
    wait_for: payment-received
    timeout: 3d
    on_timeout: chase
    next: pay_time
  - id: chase
    person: collections
    task: Chase the payment.
    next: pay_time
  - id: pay_time
    wait_until: inputs.payAt
  - id: pause
    wait: 30m
  - id: done
    finish: paid
"""
)


def test_a_valid_document_becomes_a_process_with_every_key_typed() -> None:
    frontmatter = frontmatter_of(ROUTING)

    result = validate(frontmatter, "Body.\n")

    assert result.issues == ()
    assert result.profiles == frozenset()
    process = result.process
    assert process is not None
    assert (process.name, process.description, process.body) == ("demo", "A demo process.", "Body.\n")
    assert process.frontmatter == frontmatter
    assert process.requires_systems is None
    assert [(f.name, f.type) for f in process.inputs] == [
        ("amount", "number"),
        ("manager", "person"),
        ("payAt", "datetime"),
    ]
    assert process.inputs[1] == Field(
        name="manager",
        type="person",
        description="Who approves",
        declared={"type": "person", "description": "Who approves"},
    )
    steps = {s.id: s for s in process.steps}
    assert [s.kind for s in process.steps] == [
        "agent",
        "task",
        "approve",
        "wait_for",
        "task",
        "wait_until",
        "wait",
        "finish",
    ]
    intake = steps["intake"]
    assert (intake.value, intake.next, intake.evidence, intake.due) == (
        "Read the request.",
        "triage",
        ("file", "link"),
        "4h",
    )
    assert intake.output_wire() == {"total": "number"}
    assert (steps["triage"].next, steps["triage"].routes) == (
        None,
        (Route("review"), Route("hold", "Payment is pending")),
    )
    assert steps["triage"].successors == ("review", "hold")
    review = steps["review"]
    assert (review.person, review.on_reject, review.next, review.output) == (
        "inputs.manager",
        "intake",
        "pay_time",
        None,
    )
    hold = steps["hold"]
    assert (hold.value, hold.timeout, hold.on_timeout, hold.next) == (
        "payment-received",
        "3d",
        "chase",
        "pay_time",
    )
    assert (steps["pay_time"].value, steps["pay_time"].next) == ("inputs.payAt", "pause")
    assert (steps["pause"].value, steps["pause"].next) == ("30m", "done")
    assert (steps["done"].value, steps["done"].next) == ("paid", None)
    assert process.roles == ("collections",)


def test_requires_systems_are_kept_in_written_order() -> None:
    text = HEAD + "requires: { systems: [salesforce, gmail] }\nsteps:\n  - id: done\n    finish: done\n"

    process = validate(frontmatter_of(text), "").process

    assert process is not None and process.requires_systems == ("salesforce", "gmail")


def test_the_short_check_form_is_one_yes_no_question_with_server_defaults() -> None:
    text = HEAD + "steps:\n  - id: work\n    agent: Do it.\n    check: Is it done?\n    advisory: true\n"
    text += "  - id: done\n    finish: done\n"

    result = validate(frontmatter_of(text), "")

    assert result.process is not None
    step = result.process.step("work")
    assert step.check == (CheckQuestion(ask="Is it done?", kind="yes_no"),)
    assert step.advisory is True
    assert result.profiles == {CHECK_PROFILE}
    assert result.process.profiles == {CHECK_PROFILE}


def test_profiles_are_reported_even_for_an_invalid_document() -> None:
    text = HEAD + "steps:\n  - id: fork\n    parallel: [a]\n  - id: a\n    agent: A.\n    check: 5\n"

    result = validate(frontmatter_of(text), "")

    assert result.process is None
    assert result.profiles == {PARALLEL_PROFILE, CHECK_PROFILE}


def test_the_folder_name_must_equal_the_process_name() -> None:
    frontmatter = frontmatter_of(HEAD + "steps:\n  - id: done\n    finish: done\n")

    assert validate(frontmatter, "", folder="demo").issues == ()
    assert validate(frontmatter, "", folder="other").issues == (
        Issue("name", "'demo' differs from its folder name 'other'; they must be equal"),
    )


@pytest.mark.parametrize(
    ("frontmatter", "issue"),
    [
        (None, Issue("", "frontmatter must be a mapping, not null")),
        ([], Issue("", "frontmatter must be a mapping, not a list")),
        ("name: demo", Issue("", "frontmatter must be a mapping, not 'name: demo'")),
    ],
)
def test_a_frontmatter_that_is_not_a_mapping_is_one_issue(frontmatter: Any, issue: Issue) -> None:
    assert validate(frontmatter, "") == Validated(None, (issue,), frozenset())


def test_a_body_that_is_not_utf8_text_is_refused() -> None:
    frontmatter = frontmatter_of(HEAD + "steps:\n  - id: done\n    finish: done\n")

    assert validate(frontmatter, "half \ud800 pair").issues == (
        Issue("body", "character 5 is half a surrogate pair: the body must be UTF-8 text"),
    )
    assert validate(frontmatter, 7).issues == (Issue("body", "must be text, not the number 7"),)  # type: ignore[arg-type]


# Never raises, whatever the input.

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_KEYS = st.text(max_size=6) | st.integers() | st.none() | st.booleans()
ANYTHING = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=20,
)
IDS = ("a", "b", "c", "d", "join")
STEP_KEYS = (
    "id", "agent", "task", "approve", "wait", "wait_until", "wait_for", "finish", "parallel", "output",
    "evidence", "next", "person", "on_reject", "due", "timeout", "on_timeout", "check", "advisory",
)  # fmt: skip
_ID = st.sampled_from(IDS)
_IDS_NO_JOIN = st.sampled_from(IDS[:-1])
_ROUTE = _ID | st.fixed_dictionaries({"to": _ID}, optional={"when": st.text(max_size=4)})
_QUESTION = st.fixed_dictionaries(
    {"ask": st.sampled_from(["Is it?", ""])},
    optional={
        "pass": st.sampled_from([0.9, 2, 0, ["x"], ["y", "x"], True]),
        "fail": st.sampled_from([0.5, 0.95, -1]),
        "one_of": st.sampled_from([{"x": "X", "y": "Y"}, {"x": "X"}, ["x"]]),
        "levels": st.sampled_from([["bad", "good"], ["one"], "levels"]),
        "unsure": st.sampled_from([["y"], ["x"], ["z"]]),
        "confidence": st.sampled_from([0.8, 2]),
    },
)
VALUES = (
    _ID
    | st.sampled_from(
        ["30m", "4h", "0d", "2 days", "inputs.when", "inputs.who", "steps.a.output.x", "x.y", "initiator"]
    )
    | st.lists(_ROUTE, max_size=3)
    | st.lists(_QUESTION, max_size=2)
    | st.sampled_from([{"x": "person"}, {"x": "datetime"}, {"x": {"type": "person"}}, ["file", "link"], True])
    | ANYTHING
)
STEP = st.dictionaries(st.sampled_from(STEP_KEYS), VALUES, max_size=6)
SHAPED = st.fixed_dictionaries(
    {"name": st.sampled_from(["demo", "Demo", 5]), "steps": st.lists(STEP | ANYTHING, max_size=6)},
    optional={
        "description": st.sampled_from(["A demo.", ""]),
        "inputs": st.sampled_from([{"when": "datetime", "who": "person"}, {"when": "date"}, []]),
        "requires": ANYTHING,
        "unknown": ANYTHING,
    },
)


KIND_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "agent": st.just("Do it."),
    "task": st.just("Do it yourself."),
    "approve": st.just("Approve it."),
    "wait": st.sampled_from(["1h", "1 hour"]),
    "wait_until": st.sampled_from(["inputs.when", "inputs.who"]),
    "wait_for": st.just("paid"),
    "finish": st.just("done"),
    "parallel": st.lists(_ID, min_size=1, max_size=3),
}
OPTIONAL_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "next": _ID | st.lists(_ROUTE, min_size=1, max_size=3),
    "person": st.sampled_from(["clerk", "initiator", "inputs.who", "inputs.when"]),
    "on_reject": _ID,
    "on_timeout": _ID,
    "timeout": st.just("2d"),
    "due": st.just("1d"),
    "output": st.just({"x": "string"}),
    "evidence": st.just(["file"]),
    "check": st.just("Is it right?") | st.lists(_QUESTION, min_size=1, max_size=2),
    "advisory": st.booleans(),
}


@st.composite
def processes(draw: st.DrawFn) -> dict[str, Any]:
    """Documents that are nearly valid: every step has an id and a kind and mostly the keys its kind
    takes, so the graph and profile rules run and some documents pass."""
    ids = draw(st.lists(_ID, min_size=1, max_size=7, unique=draw(st.integers(0, 9)) > 0))
    steps = []
    for step_id in ids:
        kind = draw(st.sampled_from(list(KIND_VALUES)))
        step = {"id": step_id, kind: draw(KIND_VALUES[kind])}
        if kind in ("task", "approve"):
            step["person"] = draw(OPTIONAL_VALUES["person"])
        keys = sorted(ALLOWED_KEYS[kind]) if draw(st.integers(0, 9)) > 0 else list(OPTIONAL_VALUES)
        if keys:
            for key in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)):
                step[key] = draw(OPTIONAL_VALUES[key])
        steps.append(step)
    return {
        "name": "demo",
        "description": "A demo.",
        "inputs": {"when": "datetime", "who": "person"},
        "steps": steps,
    }


def _consistent(result: Validated) -> None:
    assert isinstance(result, Validated)
    assert all(isinstance(i, Issue) and isinstance(i.path, str) and i.message for i in result.issues)
    assert (result.process is None) == bool(result.issues)
    if result.process is not None:
        ids = {s.id for s in result.process.steps}
        for step in result.process.steps:
            assert all(t in ids or t == "join" for t in step.successors)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANYTHING)
def test_validate_never_raises_on_arbitrary_values(frontmatter: Any) -> None:
    _consistent(validate(frontmatter, "body"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SHAPED)
def test_validate_never_raises_on_documents_shaped_like_processes(frontmatter: Any) -> None:
    _consistent(validate(frontmatter, "body"))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(processes())
def test_validate_never_raises_on_nearly_valid_processes(frontmatter: Any) -> None:
    _consistent(validate(frontmatter, "body"))


# load and load_path

VALID = document(HEAD + "steps:\n  - id: done\n    finish: done\n", "# Demo\r\n\r\nWindows line ends.\r\n")


def test_load_parses_validates_and_hashes() -> None:
    loaded = load(VALID)

    assert loaded.ok and loaded.issues == ()
    assert loaded.name == "demo"
    assert loaded.profiles == frozenset()
    assert loaded.process is not None
    assert loaded.process.body == "# Demo\r\n\r\nWindows line ends.\r\n"
    assert loaded.content_hash == content_hash(loaded.process.frontmatter, loaded.process.body)


def test_load_reports_parse_issues_without_a_name_or_hash() -> None:
    loaded = load("no frontmatter here\n")

    assert (loaded.name, loaded.process, loaded.content_hash, loaded.profiles) == (
        None,
        None,
        None,
        frozenset(),
    )
    assert loaded.issues == (Issue("", "no frontmatter: the first line must be exactly '---'"),)


def test_load_names_an_invalid_document_but_gives_no_hash() -> None:
    loaded = load(document("name: demo\nsteps: []\n"))

    assert (loaded.name, loaded.process, loaded.content_hash) == ("demo", None, None)
    assert [str(i) for i in loaded.issues] == [
        "description: required: what the process does and when to start it",
        "steps: needs at least one step",
    ]


def test_load_refuses_a_document_over_the_size_limit() -> None:
    loaded = load(VALID + "x" * MAX_DOCUMENT_BYTES)

    assert loaded.issues == (Issue("", "the document is larger than 1024 KiB"),)


def test_load_path_reads_bytes_exactly_so_the_hash_covers_crlf(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "PROCESS.md").write_bytes(VALID.encode())

    from_folder = load_path(folder)
    from_file = load_path(folder / "PROCESS.md")

    assert from_folder.issues == () and from_file.issues == ()
    assert from_folder.content_hash == from_file.content_hash == load(VALID).content_hash
    assert from_folder.process is not None and from_folder.process.body.endswith("\r\n")


def test_load_path_checks_the_folder_name(tmp_path: Path) -> None:
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(VALID)

    assert load_path(folder).issues == (
        Issue("name", "'demo' differs from its folder name 'other'; they must be equal"),
    )
    assert load_path(folder / "PROCESS.md").issues == ()


def test_load_path_reports_missing_and_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "latin1.md").write_bytes(b"---\nname: caf\xe9\n---\n")

    assert load_path(tmp_path / "empty").issues == (Issue("", "the folder 'empty' has no PROCESS.md"),)
    assert load_path(tmp_path / "nope").issues == (Issue("", f"no such file or folder: {tmp_path / 'nope'}"),)
    assert load_path(tmp_path / "latin1.md").issues == (
        Issue("", "not UTF-8 text: byte 13 cannot be decoded"),
    )


# Durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30m", 1800),
        ("4h", 14400),
        ("3d", 259200),
        ("0m", 0),
        ("36500d", MAX_DURATION_SECONDS),
        ("36501d", None),
        ("99999999999d", None),
        ("03d", None),
        ("1.5h", None),
        ("-1h", None),
        ("+1h", None),
        ("1 h", None),
        ("1H", None),
        ("1w", None),
        ("1s", None),
        ("PT1H", None),
        ("h", None),
        ("", None),
        ("1h\n", None),
        ("١h", None),
        (30, None),
        (None, None),
    ],
)
def test_parse_duration_accepts_only_an_integer_and_a_unit(text: Any, seconds: int | None) -> None:
    assert parse_duration(text) == seconds
