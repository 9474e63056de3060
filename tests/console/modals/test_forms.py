"""The decision form built from declared output fields: every type, a file, a route with its reason."""

from __future__ import annotations

import hashlib
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Select, Static, TextArea

from console.app import ApcApp
from console.client.local import LocalClient
from console.modals.decide import DecideDialog
from console.modals.evidence import EvidenceEditor
from console.widgets.fields import FieldEditor
from engine.clock import ManualClock
from engine.core import Engine
from tests.console.console_support import Agent, click, make_app, press, run_view, settle, shown, type_into

LOCAL_ISSUES_WHEN_EMPTY = [
    "Not sent; fix these first:",
    "output.title: missing",
    "output.amount: missing",
    "output.start: missing",
    "output.meeting: missing",
    "output.tier: missing",
    "output.tags: missing",
    "output.details: missing",
    "output.owner: missing",
    "evidence: file required",
    "next: required, one of accepted, refused",
    "reason: required",
]


def fill(app: ApcApp, values: dict[str, str]) -> None:
    for name, text in values.items():
        type_into(app, f"#field-{name}", text)


async def open_form(app: ApcApp, pilot: Pilot[None]) -> DecideDialog:
    await app.ready.wait()
    await press(pilot, "enter", "c")
    assert isinstance(app.screen, DecideDialog)
    return app.screen


async def test_a_task_form_refuses_locally_with_the_engines_own_words(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("intake", {"ticket": "T-1"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        form = await open_form(app, pilot)
        assert form.focused is form.query_one("#field-title", Input)
        await press(pilot, "ctrl+s")
        assert shown(app, "#problem").splitlines() == LOCAL_ISSUES_WHEN_EMPTY
        fill(
            app,
            {
                "title": "Laptop",
                "amount": "12abc",
                "start": "2026-02-30",
                "meeting": "tomorrow",
                "owner": "nobody",
            },
        )
        form.query_one("#field-tags", TextArea).load_text('["a", 1]')
        form.query_one("#field-details", TextArea).load_text("{bad")
        await press(pilot, "ctrl+s")
        assert shown(app, "#problem").splitlines() == [
            "Not sent; fix these first:",
            "output.amount: expected number, written like 1200 or 0.5",
            "output.details: expected object as JSON, like {} (Expecting property name enclosed in double"
            " quotes at line 1)",
            "output.start: expected date (YYYY-MM-DD, a real calendar date)",
            "output.meeting: expected datetime (RFC 3339 with an offset)",
            "output.tier: missing",
            "output.tags[1]: expected string",
            "output.owner: expected person (an email address)",
            "evidence: file required",
            "next: required, one of accepted, refused",
            "reason: required",
        ]
        editor = form.query_one("#field-amount").parent
        assert isinstance(editor, FieldEditor)
        issues = editor.query_one(".field-issues", Static)
        assert str(issues.content) == "output.amount: expected number, written like 1200 or 0.5"
        type_into(app, "#field-amount", "1,200")
        await settle(pilot)
        assert str(issues.content) == "output.amount: write the number without separators: 1200, not 1,200"
        type_into(app, "#field-amount", "1200")
        await settle(pilot)
        assert issues.display is False
        assert form.query_one("#field-tags", TextArea).placeholder == 'JSON, shaped like ["text"]'
        assert form.query_one("#field-details", TextArea).placeholder == "JSON, shaped like {}"
        form.query_one("#evidence-link", Input).focus()
        type_into(app, "#evidence-link", "DOC-7")
        await press(pilot, "enter")
        assert form.query_one("#evidence", EvidenceEditor).items == [{"kind": "link", "ref": "DOC-7"}]
        view = await run_view(client, run_id)
        assert view["run"]["state"] == "waiting"


async def test_complete_a_task_with_every_field_type_a_file_and_a_route(
    client: LocalClient, agent: Agent, clock: ManualClock, tmp_path: Path
) -> None:
    run_id = await agent.start("intake", {"ticket": "T-1"})
    signed = tmp_path / "signed-form.txt"
    signed.write_bytes(b"signed by the requester\n")
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        form = await open_form(app, pilot)
        fill(
            app,
            {
                "title": "Laptop",
                "amount": "1499.5",
                "start": "2026-11-02",
                "meeting": "2026-10-07T10:30:00+02:00",
                "owner": "mira@example.com",
            },
        )
        form.query_one("#field-urgent", Checkbox).value = True
        form.query_one("#field-tier", Select).value = 1
        form.query_one("#field-tags", TextArea).load_text('["hardware", "new hire"]')
        form.query_one("#field-details", TextArea).load_text('{"model": "X1", "ram": 32}')
        type_into(app, "#evidence-path", str(signed))
        await click(pilot, "#attach")
        file_line = shown(app, "#evidence-list")
        assert file_line.startswith("file signed-form.txt → f_")
        assert file_line.endswith(
            f" · 24 bytes · sha256 {hashlib.sha256(signed.read_bytes()).hexdigest()[:16]}…"
        )
        form.query_one("#route", Select).value = "refused"
        type_into(app, "#reason", "The cost centre is missing.")
        form.query_one("#summary", TextArea).load_text("Filled from the ticket; cost centre unknown.")
        await press(pilot, "ctrl+s", "y")
        view = await run_view(client, run_id)
        assert (view["run"]["state"], view["run"]["outcome"]) == ("ended", "refused")
        record = view["data"]["steps"]["fill_form"]
        assert record["output"] == {
            "title": "Laptop",
            "amount": 1499.5,
            "urgent": True,
            "start": "2026-11-02",
            "meeting": "2026-10-07T10:30:00+02:00",
            "tier": "silver",
            "tags": ["hardware", "new hire"],
            "details": {"model": "X1", "ram": 32},
            "owner": "mira@example.com",
        }
        assert [(e["kind"], e["sha256"]) for e in record["evidence"]] == [
            ("file", hashlib.sha256(b"signed by the requester\n").hexdigest())
        ]
        assert (record["next"], record["reason"]) == ("refused", "The cost centre is missing.")
        assert record["summary"] == "Filled from the ticket; cost centre unknown."
        assert app.toasts[0] == f"completed fill_form: {run_id[:6]}… now ended: refused"


async def test_a_not_accepted_answer_shows_every_issue_and_keeps_the_form(
    client: LocalClient, agent: Agent, clock: ManualClock, tmp_path: Path, engine: Engine
) -> None:
    run_id = await agent.start("intake", {"ticket": "T-1"})
    attachment = tmp_path / "form.txt"
    attachment.write_bytes(b"original\n")
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        form = await open_form(app, pilot)
        fill(
            app,
            {
                "title": "Laptop",
                "amount": "1",
                "start": "2026-11-02",
                "meeting": "2026-10-07T10:30:00Z",
                "owner": "mira@example.com",
            },
        )
        form.query_one("#field-tier", Select).value = 0
        form.query_one("#field-tags", TextArea).load_text("[]")
        form.query_one("#field-details", TextArea).load_text("{}")
        type_into(app, "#evidence-path", str(attachment))
        await click(pilot, "#attach")
        file_id = form.query_one("#evidence", EvidenceEditor).items[0]["ref"]
        for blob in (engine.files.root).rglob("*"):
            if blob.is_file():
                blob.write_bytes(b"changed on disk\n")
        form.query_one("#route", Select).value = "accepted"
        type_into(app, "#reason", "Complete.")
        await press(pilot, "ctrl+s", "y")
        assert isinstance(app.screen, DecideDialog)
        assert shown(app, "#problem").splitlines() == [
            "The server did not accept this decision:",
            "not_accepted: the decision was not accepted",
            "  • evidence: file required",
            f"  • evidence {file_id}: changed since upload",
        ]
        view = await run_view(client, run_id)
        assert view["run"]["state"] == "waiting"
