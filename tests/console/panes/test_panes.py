"""The other panes: processes with their map, evidence files, runs filters and pages, identity, publish."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, OptionList, Select, TabbedContent

from console.client.files import FetchedFile
from console.client.local import LocalClient
from console.client.wire import Escalation, RecordedEvidence, StepData
from console.flows.run import load_run
from console.live.session import EndpointInfo, Session
from console.modals.common import PathDialog, TextDialog
from console.modals.publish import PublishDialog
from console.modals.start import StartRunDialog
from console.panes.evidence import EvidencePane, check_file, evidence_rows
from console.screens.run import RunScreen
from console.widgets.map_view import MapView
from engine.clock import ManualClock
from tests.console.console_support import (
    MIRA,
    Agent,
    a_run,
    a_view,
    a_work_item,
    cells,
    make_app,
    press,
    run_view,
    settle,
    shown,
    type_into,
)
from tests.support.processes import write_process


async def test_processes_list_their_inputs_map_and_start_a_run(
    client: LocalClient, clock: ManualClock
) -> None:
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "3")
        pane = app.main.processes
        assert pane.table.keys == ["intake", "review-pair", "screening", "settlement"]
        pane.table.move_cursor(row=2)
        await settle(pilot)
        assert shown(app, "#process-info").splitlines() == [
            "Screen a vendor and get finance approval.",
            "",
            "version 1 · inputs",
            "  vendorName: string",
            "  amount: number (optional)",
        ]
        drawing = app.screen.query_one("#process-map", MapView).drawing
        assert drawing is not None and set(drawing.boxes) == {"check_vendor", "approve", "decline", "done"}
        await press(pilot, "enter")
        assert isinstance(app.screen, StartRunDialog)
        assert app.screen.dialog_title == "Start a run of screening v1"


async def test_evidence_files_are_verified_viewed_saved_and_their_url_copied(
    client: LocalClient, agent: Agent, clock: ManualClock, tmp_path: Path
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id, report=b"OFAC: no hits\nEU: no hits\n")
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        app.open_run(run_id)
        await settle(pilot)
        app.screen.query_one("#run-tabs", TabbedContent).active = "run-evidence"
        await settle(pilot)
        pane = app.screen.query_one("#evidence-pane", EvidencePane)
        shown_cells = [c.plain for c in cells(pane.table, "check_vendor/c/0")]
        assert shown_cells[:5] == ["check_vendor", "file", "report.txt", "✓ match", "26"]
        await press(pilot, "v")
        assert isinstance(app.screen, TextDialog)
        assert app.screen.text == "OFAC: no hits\nEU: no hits\n"
        await press(pilot, "escape")
        await press(pilot, "S")
        assert isinstance(app.screen, PathDialog)
        target = tmp_path / "saved.txt"
        type_into(app, "#path", str(target))
        await press(pilot, "enter")
        assert target.read_bytes() == b"OFAC: no hits\nEU: no hits\n"
        assert app.toasts[-1] == f"Saved 26 bytes to {target}"
        await press(pilot, "c")
        url = (await run_view(client, run_id))["data"]["steps"]["check_vendor"]["evidence"][0]["url"]
        assert app.toasts[-1].startswith("Copied: http://127.0.0.1:8765/files/")
        assert app.toasts[-1].split("?")[0] == "Copied: " + url.split("?")[0]


async def test_runs_filter_by_state_and_input_and_load_more_pages(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    first = await agent.start("settlement", {"invoice": "INV-1"})
    for number in range(2, 106):
        await agent.start("settlement", {"invoice": f"INV-{number}"})
    await agent.call("send_event", runId=first, name="invoice-paid")
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        runs = app.main.runs
        assert len(runs.table.keys) == 100
        status = "1–40 of ≥100 runs · more on the server: m loads the next page, G all"
        assert shown(app, "#runs-status") == status
        await press(pilot, "m")
        assert len(runs.table.keys) == 105
        assert shown(app, "#runs-status") == "1–40 of 105 runs"
        runs.query_one("#runs-state", Select).value = "ended"
        await settle(pilot)
        assert runs.table.keys == [first]
        runs.query_one("#runs-state", Select).value = Select.NULL
        await press(pilot, "slash", "tab", "tab")
        assert app.focused is runs.query_one("#runs-inputs")
        await press(pilot, *"invoice=INV-7, nope", "enter")
        assert app.focused is runs.table
        assert [runs.runs[k]["inputs"]["invoice"] for k in runs.table.keys] == ["INV-7"]
        assert shown(app, "#runs-status") == "1–1 of 1 runs · filter: 'nope': write field=value"


async def test_act_as_another_person_shows_their_queue(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    await agent.screen(await agent.start("screening", {"vendorName": "Acme"}))
    await agent.start("intake", {"ticket": "T-1"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        assert len(app.main.work.table.keys) == 2
        await press(pilot, "I")
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels == ["mira@example.com", "ops@example.com (operator)"]
        options.highlighted = 0
        await press(pilot, "enter")
        assert client.identity == MIRA
        assert [e["workItem"]["stepId"] for e in app.main.work.entries.values()] == ["approve"]
        assert shown(app, "#status").startswith(" mira@example.com (person) · embedded · test")
        assert app.toasts[0] == "Now acting as mira@example.com"


TINY = """---
name: tiny
description: One task for the intake role.
requires:
  systems: [ticketing]
steps:
  - id: note
    person: intake
    task: Write it down.
  - id: done
    finish: ok
---
Body.
"""


async def test_publish_asks_the_group_of_every_role_shows_requires_and_waits_for_confirmation(
    client: LocalClient, clock: ManualClock, tmp_path: Path
) -> None:
    good = write_process(tmp_path / "new", TINY)
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        await press(pilot, "P")
        type_into(app, "#path", str(good))
        await press(pilot, "enter")
        dialog = app.screen
        assert isinstance(dialog, PublishDialog)
        assert shown(app, "#requires").splitlines() == [
            "requires these systems (the process grants nothing in them):",
            "  • ticketing",
        ]
        assert dialog.query_one("#role-intake", Input).value == "intake"
        await press(pilot, "escape")
        listed = await client.list_processes()
        assert listed["ok"] and "tiny" not in {p["name"] for p in listed["data"]["items"]}
        await press(pilot, "P")
        type_into(app, "#path", str(good))
        await press(pilot, "enter")
        type_into(app, "#role-intake", "")
        await press(pilot, "ctrl+s")
        assert shown(app, "#problem") == "intake: a group is required"
        type_into(app, "#role-intake", "legal")
        await press(pilot, "ctrl+s")
        assert app.toasts[-1] == "tiny v1: published"
        started = await client.start_run("tiny", {})
        assert started["ok"] and started["data"]["workItems"][0]["assignedTo"] == {"group": "legal"}
        await press(pilot, "P")
        type_into(app, "#path", str(tmp_path / "missing"))
        await press(pilot, "enter")
        assert shown(app, "#answer").splitlines()[0] == f"invalid: {tmp_path / 'missing'} cannot be published"


async def test_the_endpoint_tab_shows_a_client_config_to_paste(
    client: LocalClient, clock: ManualClock
) -> None:
    from console.app import ApcApp
    from console.settings.config import ConsoleConfig

    endpoint = EndpointInfo("http://127.0.0.1:8765/mcp", "local-agent", "apc_secret-token", Path("/data"))
    app = ApcApp(
        Session(client, "embedded · test", clock=clock, endpoint=endpoint), live=False, config=ConsoleConfig()
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await press(pilot, "4")
        text = shown(app, "#endpoint-text")
        assert text.startswith(
            "MCP endpoint\n  http://127.0.0.1:8765/mcp\n\nagent token (acts as local-agent)\n"
        )
        config = json.loads(text[text.index("{") :])
        assert config == {
            "mcpServers": {
                "apc": {
                    "type": "http",
                    "url": "http://127.0.0.1:8765/mcp",
                    "headers": {"Authorization": "Bearer apc_secret-token"},
                }
            }
        }
        assert not isinstance(app.screen, RunScreen)


async def test_a_run_closed_while_it_was_read_is_left_alone(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    app = make_app(client, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ready.wait()
        app.open_run(run_id)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen) and screen.view is not None
        await press(pilot, "escape")
        assert not screen.is_attached
        await load_run(app.flows, screen)
        assert screen.view["run"]["id"] == run_id
        assert not isinstance(app.screen, RunScreen) and app.toasts == []


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
