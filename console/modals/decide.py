"""The decision form, generated from the work item: what it accepts, what each decision requires.

Local checks mirror the server's rules (field values through the engine's own `check_values`), but the
server decides: its answer is shown either way. A `stale` answer offers a re-read that shows what
changed in the run data, takes the fresh snapshot, and lets the person send the same decision again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Button, Checkbox, Input, Label, RadioButton, RadioSet, Select, Static, TextArea

from console.answer import error_lines
from console.client import Client
from console.client.envelope import error_code
from console.client.wire import (
    DecideArguments,
    DecideResult,
    Decision,
    PersonWorkEntry,
    Route,
    RunView,
    StepRecord,
    WorkItem,
)
from console.diff import run_data_changes
from console.modals.common import Dialog
from console.modals.evidence import EvidenceEditor
from console.modals.fields import FieldsForm, declared_fields
from console.palette import Palette
from console.render import BarOf, to_text, work_item_lines

CheckBars = Callable[[str, int], Awaitable[Callable[[str], BarOf]]]
"""Process name and version to, per step, each verdict question's bar (`Documents.check_bars`)."""

VERBS = {
    "approved": "Approve",
    "rejected": "Reject",
    "completed": "Complete",
    "returned": "Return",
    "failed": "Fail",
}
NOTE_DECISIONS = ("rejected", "returned", "failed")


def find_item(view: RunView, item_id: str) -> WorkItem | None:
    return next((item for item in view["workItems"] if item["id"] == item_id), None)


class DecideDialog(Dialog[DecideResult]):
    """Dismisses with the run as the accepted decision left it, or None when closed without a decision."""

    def __init__(
        self,
        client: Client,
        entry: PersonWorkEntry,
        palette: Palette,
        *,
        people: list[str],
        check_bars: CheckBars | None = None,
    ) -> None:
        """`check_bars` finds each verdict question's threshold (the app's), shown once it is known."""
        item = entry["workItem"]
        test = " · TEST RUN" if entry["mode"] == "test" else ""
        title = f"{item['kind']} · {entry['process']} v{entry['version']} · run {entry['runId']} · step {item['stepId']}{test}"
        super().__init__(title, id="decide")
        self.client = client
        self.entry = entry
        self.palette = palette
        self.people = people
        self.baseline: RunView | None = None
        self.check_bars = check_bars

    @property
    def item(self) -> WorkItem:
        return self.entry["workItem"]

    @property
    def decisions(self) -> list[Decision]:
        return list(self.item["decide"]["decisions"])

    @property
    def routes(self) -> list[Route] | None:
        return self.item["next"]

    @property
    def candidate(self) -> StepRecord | None:
        escalation = self.item["escalation"]
        return escalation.get("candidate") if escalation is not None else None

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="decide-body"):
            yield Static(to_text(work_item_lines(self.item, self.palette)), id="item")
            with RadioSet(id="decision"):
                for i, decision in enumerate(self.decisions):
                    yield RadioButton(Text(decision), value=i == 0, id=f"decision-{decision}")
            with Vertical(id="completed-section"):
                if self.candidate is not None:
                    yield Checkbox(
                        "complete with the held candidate as it is", value=True, id="use-candidate"
                    )
                fields = declared_fields(self.item["output"], "output")
                held: StepRecord = self.candidate or {}
                yield FieldsForm(
                    fields, "output", people=self.people, initial=held.get("output"), id="output"
                )
                if self.item["evidence"] is not None or "completed" in self.decisions:
                    yield EvidenceEditor(self.client, self.item["evidence"], held.get("evidence"))
                if self.routes is not None:
                    yield Label(Text("next: choose a route", style="bold"))
                    options = [
                        (Text(f"{r['to']}" + (f" — {r['when']}" if r.get("when") else "")), r["to"])
                        for r in self.routes
                    ]
                    chosen = held.get("next") if held.get("next") in {r["to"] for r in self.routes} else None
                    yield Select(
                        options, prompt="route", id="route", compact=True, value=chosen or Select.NULL
                    )
                    yield Input(
                        str(held.get("reason") or ""),
                        placeholder="reason for this route (required)",
                        id="reason",
                        compact=True,
                    )
                yield Label(Text("summary", style="bold"))
                yield TextArea(str(held.get("summary") or ""), id="summary", soft_wrap=True)
            with Vertical(id="note-section"):
                yield Label(Text("note (required): the protocol records it", style="bold"))
                yield Input(placeholder="note", id="note", compact=True)
            yield Static("", id="problem", classes="problem")
            yield Static("", id="changes")

    def compose_buttons(self) -> ComposeResult:
        yield Button("Send", id="submit", variant="primary", compact=True)
        yield Button("Re-read", id="reread", classes="hidden", compact=True)
        yield Button("Close", id="close", compact=True)

    def on_mount(self) -> None:
        self._sync_sections()
        self.run_worker(self._load_baseline(), group="baseline")

    async def _load_baseline(self) -> None:
        answer = await self.client.get_run(self.entry["runId"])
        if answer["ok"]:
            self.baseline = answer["data"]
        escalation, handoff = self.item["escalation"], self.item["handoff"]
        checked = (escalation is not None and "check" in escalation) or (
            handoff is not None and "check" in handoff
        )
        if self.check_bars is not None and checked:
            bars = await self.check_bars(self.entry["process"], int(self.entry["version"]))
            lines = work_item_lines(self.item, self.palette, bars(self.item["stepId"]))
            self.query_one("#item", Static).update(to_text(lines))

    @property
    def decision(self) -> Decision | None:
        pressed = self.query_one("#decision", RadioSet).pressed_button
        if pressed is None:
            return None
        return next((d for d in self.decisions if f"decision-{d}" == pressed.id), None)

    @on(RadioSet.Changed, "#decision")
    @on(Checkbox.Changed, "#use-candidate")
    def _sync_sections(self) -> None:
        decision = self.decision
        self.query_one("#completed-section").display = decision == "completed"
        self.query_one("#note-section").display = decision in NOTE_DECISIONS
        if self.candidate is not None and decision == "completed":
            own = not self.query_one("#use-candidate", Checkbox).value
            for part in self.query_one("#completed-section").children:
                if part.id != "use-candidate":
                    part.display = own
        verb = VERBS.get(decision or "", "Send")
        target = f"{verb} {self.item['stepId']} on {self.entry['runId']}"
        self.query_one("#submit", Button).label = Text(target)
        self.query_one("#submit", Button).variant = (
            "error" if decision in ("rejected", "failed") else "primary"
        )

    def _problem(self, lines: list[str], style: str = "") -> None:
        self.query_one("#problem", Static).update(Text("\n".join(lines), style=style))

    def arguments(self) -> tuple[DecideArguments | None, list[str]]:
        """The decide call as it will be sent, and every local issue that stops it being sent."""
        decision = self.decision
        if decision is None:
            return None, ["decision: choose one"]
        prepared = self.item["decide"]["arguments"]
        arguments: DecideArguments = {
            "runId": prepared["runId"],
            "workItemId": prepared["workItemId"],
            "snapshot": prepared["snapshot"],
            "decision": decision,
            "requestId": prepared["requestId"],
        }
        issues: list[str] = []
        if decision in NOTE_DECISIONS:
            note = self.query_one("#note", Input).value.strip()
            if not note:
                issues.append("note: required")
            arguments["note"] = note
        if decision == "completed":
            issues += self._completed(arguments)
        return arguments, issues

    def _completed(self, arguments: DecideArguments) -> list[str]:
        if self.candidate is not None and self.query_one("#use-candidate", Checkbox).value:
            return []
        output, issues = self.query_one("#output", FieldsForm).collect()
        arguments["output"] = output
        evidence = self.query(EvidenceEditor)
        if evidence:
            issues += evidence.first().issues()
            if evidence.first().items:
                arguments["evidence"] = list(evidence.first().items)
        if self.routes is not None:
            route = self.query_one("#route", Select).value
            reason = self.query_one("#reason", Input).value.strip()
            if route is Select.NULL:
                issues.append(f"next: required, one of {', '.join(r['to'] for r in self.routes)}")
            else:
                arguments["next"] = str(route)
            if not reason:
                issues.append("reason: required")
            arguments["reason"] = reason
        summary = self.query_one("#summary", TextArea).text.strip()
        if summary:
            arguments["summary"] = summary
        return issues

    async def action_submit(self) -> None:
        arguments, issues = self.arguments()
        if arguments is None or issues:
            self._problem(["Not sent; fix these first:", *issues], self.palette.error)
            return
        button = self.query_one("#submit", Button)
        button.disabled = True
        try:
            answer = await self.client.decide(arguments)
        finally:
            button.disabled = False
        if answer["ok"]:
            self.dismiss(answer["data"])
            return
        stale = error_code(answer) == "stale"
        lines = ["The server did not accept this decision:", *error_lines(answer)]
        if stale:
            lines.append(
                "The run changed since this form was read. Re-read it, check what changed, and send again."
            )
        self._problem(lines, self.palette.error)
        self.query_one("#reread", Button).set_class(not stale, "hidden")

    @on(Button.Pressed, "#reread")
    async def reread(self) -> None:
        answer = await self.client.get_run(self.entry["runId"])
        if not answer["ok"]:
            self._problem(["Could not re-read the run:", *error_lines(answer)], self.palette.error)
            return
        view = answer["data"]
        fresh = find_item(view, self.item["id"])
        changes = run_data_changes(None if self.baseline is None else self.baseline["data"], view["data"])
        self.baseline = view
        self.query_one("#reread", Button).add_class("hidden")
        if fresh is None:
            self._problem(
                ["This work item is no longer open: it was decided or the run moved on."],
                self.palette.warning,
            )
            self.query_one("#submit", Button).disabled = True
        else:
            self.entry = {**self.entry, "workItem": fresh}
            self._problem(
                ["Re-read: the snapshot is current again. Check what changed, then send again."],
                self.palette.success,
            )
        heading = (
            "What changed in the run data:" if changes else "No change in run data since the form opened."
        )
        self.query_one("#changes", Static).update(Text("\n".join([heading, *changes])))
