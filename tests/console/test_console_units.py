"""Pure pieces of the console: formatting, diffs, filters, the action registry, themes, settings."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from textual.binding import Binding

from console.client.base import Capabilities
from console.client.files import FetchedFile, file_name_from
from console.client.remote import token_identity
from console.client.wire import (
    Escalation,
    Failure,
    RecordedEvidence,
    RunData,
    SendEventResult,
    StepData,
    StepRecord,
    StepView,
)
from console.keys.registry import ACTIONS, SCOPE_TITLES, allowed, bindings
from console.modals.decide import Confirm, DecisionSet
from console.modals.decide_context import input_table
from console.modals.event import parse_event
from console.panes.evidence import check_file, evidence_rows
from console.panes.runs import parse_input_filter
from console.settings.config import ConsoleConfig
from console.settings.themes import load_themes
from console.views.answer import error_lines, event_line, run_state_line
from console.views.diff import attempt_diffs, diff_values, run_data_changes
from console.views.format import age, counted, due, span
from console.views.palette import Palette
from console.views.render import Hanging, record_lines, reflowed
from tests.console.console_support import a_run, a_view, a_work_item

NOW = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


def test_a_count_takes_the_plural_unless_it_is_one() -> None:
    assert [counted(n, "earlier attempt") for n in (0, 1, 2, 1200)] == [
        "0 earlier attempts",
        "1 earlier attempt",
        "2 earlier attempts",
        "1,200 earlier attempts",
    ]


def test_spans_use_the_largest_whole_unit() -> None:
    assert [span(s) for s in (0, 59, 60, 3599, 3600, 86399, 86400, -7200)] == [
        "0s",
        "59s",
        "1m",
        "59m",
        "1h",
        "23h",
        "1d",
        "2h",
    ]


def test_due_reads_as_time_left_or_late_and_late_is_styled() -> None:
    soon = due(NOW, "2026-10-06T12:00:00Z", "bold red")
    late = due(NOW, "2026-10-05T09:00:00Z", "bold red")
    assert (soon.plain, str(soon.style)) == ("in 3h", "")
    assert (late.plain, str(late.style)) == ("1d late", "bold red")
    assert due(NOW, None, "bold red").plain == "—"
    assert str(due(NOW, "2026-10-06T12:00:00Z", "bold red", overdue=True).style) == "bold red"
    assert age(NOW, "2026-10-06T08:15:00+00:00").plain == "45m"


def test_diffs_name_each_changed_leaf() -> None:
    before = {"output": {"cleared": True, "note": "a"}, "summary": "x"}
    after = {"output": {"cleared": False, "extra": 1}, "summary": "x"}
    assert diff_values(before, after) == [
        "~ output.cleared: true → false",
        "- output.note: a",
        "+ output.extra: 1",
    ]


def test_attempts_are_compared_with_the_one_before() -> None:
    step: StepData = {
        "output": {"cleared": True},
        "evidence": [{"kind": "file", "ref": "f_2", "sha256": "b", "url": "http://x/2"}],
        "by": "a",
        "at": "t2",
        "history": [
            {
                "output": {"cleared": False},
                "evidence": [{"kind": "file", "ref": "f_1", "sha256": "a"}],
                "by": "a",
                "at": "t1",
            }
        ],
    }
    (first, first_changes), (current, changes) = attempt_diffs(step)
    assert first["at"] == "t1" and first_changes == []
    assert current["at"] == "t2"
    assert changes == ["~ output.cleared: false → true", "~ evidence: file f_1 → file f_2"]


def test_a_stale_read_ignores_new_signed_urls_and_empty_histories() -> None:
    before: RunData = {
        "inputs": {},
        "steps": {
            "a": {"evidence": [{"kind": "file", "ref": "f_1", "sha256": "a", "url": "u1"}], "history": []}
        },
    }
    after: RunData = {
        "inputs": {},
        "steps": {
            "a": {"evidence": [{"kind": "file", "ref": "f_1", "sha256": "a", "url": "u2"}], "history": []},
            "b": {"by": "x", "history": []},
        },
    }
    assert run_data_changes(before, after) == ["+ steps.b.by: x"]


def test_input_filters_read_json_values_and_name_what_they_cannot_read() -> None:
    assert parse_input_filter("vendorName=Acme, amount=48000, urgent=true, bad") == (
        {"vendorName": "Acme", "amount": 48000, "urgent": True},
        ["'bad': write field=value"],
    )
    assert parse_input_filter("") == ({}, [])


def test_event_names_and_data_are_checked_before_sending() -> None:
    assert parse_event("invoice-paid", '{"amount": 1}') == (("invoice-paid", {"amount": 1}), [])
    assert parse_event("invoice-paid", "") == (("invoice-paid", None), [])
    assert parse_event("Paid!", "[1]") == (
        None,
        [
            "name: lowercase letters, digits, '_' or '-', starting with a letter (at most 64)",
            "data: expected a JSON object",
        ],
    )


def test_every_action_has_a_unique_id_a_known_scope_and_a_handler() -> None:
    from console.app import ApcApp
    from console.keys.commands import RegistryCommands
    from console.modals.common import Dialog
    from console.panes.evidence import EvidencePane
    from console.panes.processes import ProcessesPane
    from console.panes.runs import RunsPane
    from console.panes.work import WorkPane
    from console.screens.run import RunScreen
    from console.widgets.scroll_pane import ScrollPane
    from console.widgets.virtual_table import VirtualTable

    handlers = {
        "app": ApcApp,
        "table": VirtualTable,
        "work": WorkPane,
        "runs": RunsPane,
        "processes": ProcessesPane,
        "run": RunScreen,
        "evidence": EvidencePane,
        "modal": Dialog,
        "decide": DecisionSet,
        "confirm": Confirm,
        "scroll": ScrollPane,
    }
    assert len({spec.id for spec in ACTIONS}) == len(ACTIONS)
    assert set(SCOPE_TITLES) == set(handlers)
    for spec in ACTIONS:
        name = spec.action.split("(")[0]
        assert hasattr(handlers[spec.scope], f"action_{name}"), spec.id
        assert spec.id.startswith(f"{spec.scope}."), spec.id
    for scope in handlers:
        # The confirmation line holds focus while it asks, so its y/n answer before the app's keys.
        shared = (scope,) if scope == "confirm" else (scope, "app")
        keys = [key for spec in ACTIONS if spec.scope in shared for key in spec.keys.split(",")]
        assert len(keys) == len(set(keys)), scope
    assert RegistryCommands is not None
    work = {b.id: (b.key, b.description, b.tooltip) for b in bindings("work") if isinstance(b, Binding)}
    assert work["work.decide"] == ("enter,d", "Decide", "Open the decision form")


def test_write_and_capability_actions_are_hidden_where_they_do_not_apply() -> None:
    by_id = {spec.id: spec for spec in ACTIONS}
    embedded = Capabilities(publish=True, switch_identity=True, process_document=True)
    assert allowed(by_id["runs.cancel"], read_only=False, capabilities=Capabilities())
    assert not allowed(by_id["runs.cancel"], read_only=True, capabilities=embedded)
    assert not allowed(by_id["app.publish"], read_only=False, capabilities=Capabilities())
    assert allowed(by_id["app.publish"], read_only=False, capabilities=embedded)
    assert allowed(by_id["app.identity"], read_only=True, capabilities=embedded)


def test_three_themes_load_and_a_broken_file_is_reported_not_fatal(tmp_path: Path) -> None:
    assert sorted(t.name for t in load_themes().themes) == ["ember", "harbor", "paper"]
    (tmp_path / "good.toml").write_text('name = "mine"\nprimary = "#123456"\ndark = false\n')
    (tmp_path / "bad.toml").write_text('name = "x"\ncolour = "#fff"\nprimary = "#000000"\n')
    (tmp_path / "broken.toml").write_text("name = \n")
    loaded = load_themes(tmp_path)
    assert [(t.name, t.dark, t.primary) for t in loaded.themes] == [("mine", False, "#123456")]
    assert loaded.problems[0] == "bad.toml: colour: unknown key"
    assert loaded.problems[1].startswith("broken.toml: ")


def test_settings_are_remembered_and_a_bad_file_gives_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "apc" / "console.toml"
    assert ConsoleConfig.load(path) == ConsoleConfig(path=path)
    ConsoleConfig(theme='pa"per', refresh_seconds=5.0, path=path).save()
    assert ConsoleConfig.load(path) == ConsoleConfig(theme='pa"per', refresh_seconds=5.0, path=path)
    path.write_text("refresh_seconds = true\ntheme = 3\n")
    assert ConsoleConfig.load(path) == ConsoleConfig(path=path)
    path.write_text("refresh_seconds = 0.01\n")
    assert ConsoleConfig.load(path).refresh_seconds == 0.5


def test_answers_read_as_the_new_state_or_every_issue() -> None:
    steps: list[StepView] = [
        {"id": "a", "kind": "agent", "state": "done"},
        {"id": "b", "kind": "approve", "state": "waiting"},
    ]
    view = a_view(a_run("r_1", "waiting"), steps)
    assert run_state_line(view) == "r_1 waiting at b"
    ended = a_view(a_run("r_1", "ended", "onboarded"))
    assert run_state_line(ended) == "r_1 ended: onboarded"
    held: SendEventResult = {"consumedBy": None}
    assert event_line(held) == "held: no wait for it is ready yet"
    error: Failure = {
        "ok": False,
        "error": {"code": "invalid", "message": "bad", "issues": ["a: missing", "b: x"]},
    }
    assert error_lines(error) == ["invalid: bad", "  • a: missing", "  • b: x"]


def test_evidence_rows_cover_history_current_and_held_candidates() -> None:
    check: StepData = {
        "evidence": [{"kind": "file", "ref": "f_2"}],
        "history": [{"evidence": [{"kind": "link", "ref": "https://x"}]}],
    }
    candidate: Escalation = {
        "note": "held",
        "by": "a_screener",
        "at": "2026-10-06T09:00:00Z",
        "candidate": {"evidence": [{"kind": "file", "ref": "f_3"}]},
    }
    view = a_view(a_run(), data={"check": check}, work_items=[a_work_item("other", candidate)])
    rows = evidence_rows(view)
    assert [(r.key, r.attempt, r.item["ref"]) for r in rows] == [
        ("check/h1/0", "#1", "https://x"),
        ("check/c/0", "current", "f_2"),
        ("other/held/0", "held", "f_3"),
    ]
    recorded: RecordedEvidence = {"kind": "file", "ref": "f_1", "sha256": "0" * 64}
    checked = check_file(recorded, FetchedFile(b"abc", "a.txt", "text/plain"))
    assert (checked.size, checked.matches, checked.sha256[:8]) == (3, False, "ba7816bf")


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("attachment; filename=\"report.txt\"; filename*=UTF-8''r%C3%A9port.txt", "report.txt"),
        ("attachment", None),
        (None, None),
    ],
)
def test_file_names_come_from_the_content_disposition(header: str | None, name: str | None) -> None:
    assert file_name_from(header) == name


def test_a_remote_token_is_labelled_by_its_claims_or_its_last_characters() -> None:
    import jwt

    assert token_identity("apc_abcdefgh1234").id == "token …1234"
    signed = jwt.encode({"sub": "u_1", "email": "mira@example.com"}, "k" * 32, algorithm="HS256")
    assert token_identity(signed).id == "mira@example.com"


async def test_the_fourteen_tools_send_exactly_their_arguments() -> None:
    from console.client.base import ToolClient
    from engine.identity import person

    sent: list[tuple[str, dict]] = []

    class Recording(ToolClient):
        async def call(self, tool: str, arguments: dict) -> dict:
            sent.append((tool, arguments))
            return {"ok": True, "data": {}}

    numbers = iter(range(1, 100))
    client = Recording(person("ops@example.com"), request_ids=lambda: f"q{next(numbers)}")
    await client.describe()
    await client.list_processes()
    await client.start_run("p", {"a": 1}, mode="test")
    await client.get_run("r_1")
    await client.get_work(limit=5)
    await client.claim("r_1", "s")
    await client.renew("tok")
    await client.upload("a.txt", "text/plain", b"hi")
    await client.submit("tok", {"x": 1}, "did it", next="b", reason="because")
    await client.escalate("tok", "stuck")
    await client.decide(
        {
            "runId": "r_1",
            "workItemId": "w_1",
            "snapshot": "s1",
            "requestId": "<new UUID>",
            "decision": "approved",
        }
    )
    await client.cancel("r_1", "dup")
    await client.send_event("r_1", "paid")
    await client.list_runs(state="ended", inputs={"a": 1})
    assert sent == [
        ("describe", {}),
        ("list_processes", {}),
        ("start_run", {"process": "p", "inputs": {"a": 1}, "mode": "test", "requestId": "q1"}),
        ("get_run", {"runId": "r_1"}),
        ("get_work", {"limit": 5}),
        ("claim", {"runId": "r_1", "stepId": "s", "requestId": "q2"}),
        ("renew", {"token": "tok", "requestId": "q3"}),
        (
            "upload",
            {"fileName": "a.txt", "contentType": "text/plain", "contentBase64": "aGk=", "requestId": "q4"},
        ),
        (
            "submit",
            {
                "token": "tok",
                "output": {"x": 1},
                "summary": "did it",
                "next": "b",
                "reason": "because",
                "requestId": "q5",
            },
        ),
        ("escalate", {"token": "tok", "note": "stuck", "requestId": "q6"}),
        (
            "decide",
            {
                "runId": "r_1",
                "workItemId": "w_1",
                "snapshot": "s1",
                "decision": "approved",
                "requestId": "q7",
            },
        ),
        ("cancel", {"runId": "r_1", "reason": "dup", "requestId": "q8"}),
        ("send_event", {"runId": "r_1", "name": "paid", "requestId": "q9"}),
        ("list_runs", {"state": "ended", "inputs": {"a": 1}}),
    ]


def test_instructions_lose_their_source_line_breaks_but_keep_paragraphs_and_lists() -> None:
    source = "Approve when the spend has budget, the\nvendor is active.\n\n- one item\n  indented\n- two\n# Notes\nText"
    assert reflowed(source) == (
        "Approve when the spend has budget, the vendor is active.\n\n- one item\n  indented\n- two\n# Notes\nText"
    )


def test_inputs_show_objects_as_pairs_and_lists_of_objects_one_row_each() -> None:
    inputs: dict[str, object] = {
        "vendor": "Globex",
        "amount": 12.5,
        "address": {"city": "Lyon", "zip": "69001"},
        "lineItems": [{"description": "Desk", "quantity": 2}, {"description": "Lamp", "quantity": 1}],
        "tags": ["a", "b"],
        "empty": [],
    }
    assert input_table(inputs, Palette()) == [
        ("  vendor     Globex", ""),
        ("  amount     12.5", ""),
        ("  address    city: Lyon · zip: 69001", ""),
        ("  lineItems  2 items", ""),
        ("             1. description: Desk · quantity: 2", ""),
        ("             2. description: Lamp · quantity: 1", ""),
        ('  tags       ["a", "b"]', ""),
        ("  empty      []", ""),
    ]
    assert input_table({}, Palette()) == [("  (no inputs)", Palette().muted)]


def test_a_steps_output_shows_objects_as_pairs_and_lists_of_objects_one_row_each() -> None:
    record: StepRecord = {
        "by": "agent-cy",
        "at": "2026-12-03T20:42:00Z",
        "output": {
            "totalAccounts": 280,
            "owner": {"name": "Sam", "team": "IT"},
            "flaggedAccounts": [{"user": "ana@example.com", "reason": "admin"}, {"user": "tom@example.com"}],
        },
    }
    assert [text for text, _ in record_lines(record, Palette(), "  ")] == [
        "  done by agent-cy at 2026-12-03 20:42",
        "  output",
        "    totalAccounts: 280",
        "    owner: name: Sam · team: IT",
        "    flaggedAccounts: 2 items",
        "                     1. user: ana@example.com · reason: admin",
        "                     2. user: tom@example.com",
    ]


def test_an_indented_line_wraps_under_its_own_indent_and_prose_from_the_edge() -> None:
    lines = [
        ("Approve refunds over 100 when the verdict is right", "bold"),
        ("    decisionSummary: refund 258.55 of the 319.60 order 13386 (wrong_item)", ""),
        ("  short", ""),
        ("                  deep: a value that would hang past half the width", ""),
    ]
    console = Console(width=36, record=True)
    console.print(Hanging(lines))
    assert [line.rstrip() for line in console.export_text().splitlines()] == [
        "Approve refunds over 100 when the",
        "verdict is right",
        "    decisionSummary: refund 258.55",
        "      of the 319.60 order 13386",
        "      (wrong_item)",
        "  short",
        "                  deep: a value that",
        "would hang past half the width",
    ]
    assert str(Hanging(lines)) == "\n".join(text for text, _ in lines)
