"""The decision form, generated from the work item: what it accepts, what each decision requires.

Local checks mirror the server's rules (field values through the engine's own `check_values`), but the
server decides: its answer is shown either way. A `stale` answer offers a re-read that shows what
changed in the run data, takes the fresh snapshot, and lets the person send the same decision again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    Label,
    OptionList,
    RadioButton,
    RadioSet,
    Select,
    Static,
    TextArea,
)
from textual.widgets.option_list import Option

from console.client import Client
from console.client.envelope import error_code
from console.client.files import FetchedFile
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
from console.keys.registry import bindings
from console.keys.scoped import Scoped
from console.messages import CopyRequested, ViewTextRequested
from console.modals.common import Dialog
from console.modals.decide_context import context_lines, evidence_of
from console.modals.evidence import EvidenceEditor
from console.views.answer import error_lines
from console.views.diff import run_data_changes
from console.views.format import short_id
from console.views.palette import Palette
from console.views.render import BarOf, Hanging
from console.widgets.fields import FieldsForm, declared_fields
from console.widgets.toggles import GlyphCheckbox, GlyphRadioButton

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


KEYS = {"approved": "a", "rejected": "x", "completed": "c", "returned": "b", "failed": "f"}
"""The key that picks each decision in the form (the registry's `decide` scope binds the same)."""


def confirmation(decision: Decision, entry: PersonWorkEntry) -> str:
    """`Approve lead_approval on r_7d64… (customer-refund)? y/n`"""
    step = entry["workItem"]["stepId"]
    return f"{VERBS[decision]} {step} on {short_id(entry['runId'])} ({entry['process']})? y/n"


class Confirm(Scoped, Static, can_focus=True):
    """The one-line question before a decision is sent; `y` sends, `n` or escape goes back to the form."""

    SCOPE = "confirm"
    BINDINGS = bindings("confirm")

    def action_confirm_yes(self) -> None:
        self.post_message(Confirm.Answered(True))

    def action_confirm_no(self) -> None:
        self.post_message(Confirm.Answered(False))

    class Answered(Message):
        def __init__(self, yes: bool) -> None:
            super().__init__()
            self.yes = yes


class DecisionSet(Scoped, RadioSet):
    """The decision row. Its keys pick a decision only while it has focus, so letters typed on a button
    or a field never switch the decision; elsewhere the row is a `shift+tab` or a click away."""

    SCOPE = "decide"
    BINDINGS = bindings("decide")

    def action_choose(self, decision: str) -> None:
        offered = self.query(f"#decision-{decision}").results(RadioButton)
        for button in offered:  # none when this work item does not accept the decision
            button.value = True
            self.post_message(DecisionSet.Chosen(decision))

    class Chosen(Message):
        """A decision picked by its key: the form goes on to the first field it needs."""

        def __init__(self, decision: str) -> None:
            super().__init__()
            self.decision = decision


class DecideDialog(Dialog[DecideResult]):
    """Dismisses with the run as the accepted decision left it, or None when closed without a decision.

    A split view: on the left everything the decision is about (`decide_context`), on the right the
    form. Below 120 columns the halves stack, context above. Nothing is chosen for the person: each
    decision has its key on the decision row (`DecisionSet`), and `ctrl+s` asks a one-line confirmation
    naming what will be sent. Switching decision hides the parts another decision needs, never clears them.
    """

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # noqa: RUF012 (Textual's own declaration)

    def __init__(
        self,
        client: Client,
        entry: PersonWorkEntry,
        palette: Palette,
        *,
        people: list[str],
        check_bars: CheckBars | None = None,
        confirm_approvals: bool = True,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        """`check_bars` finds each verdict question's threshold (the app's), shown once it is known;
        `confirm_approvals` False sends an approval without the confirmation (every other decision asks)."""
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
        self.confirm_approvals = confirm_approvals
        self.now = now or (lambda: datetime.now(UTC))
        self.bar: BarOf | None = None
        self.pending: DecideArguments | None = None
        """The decision waiting for `y` on the confirmation line."""

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
        with Horizontal(id="decide-split"):
            with VerticalScroll(id="decide-context", can_focus=True):
                yield Static(self._context_text(), id="context")
                yield Label(
                    Text("evidence files (enter opens one)", style="bold"), id="context-evidence-label"
                )
                yield OptionList(id="context-evidence", compact=True)
            with VerticalScroll(id="decide-body"):
                yield Label(Text("decision (press its key)", style="bold"))
                with DecisionSet(id="decision"):
                    for decision in self.decisions:
                        label = f"{KEYS[decision]} {decision}"
                        yield GlyphRadioButton(Text(label), value=False, id=f"decision-{decision}")
                yield from self._compose_form()
        yield Confirm("", id="confirm")

    def _compose_form(self) -> ComposeResult:
        with Vertical(id="completed-section"):
            if self.candidate is not None:
                yield GlyphCheckbox(
                    "complete with the held candidate as it is", value=True, id="use-candidate"
                )
            fields = declared_fields(self.item["output"], "output")
            held: StepRecord = self.candidate or {}
            yield FieldsForm(fields, "output", people=self.people, initial=held.get("output"), id="output")
            if self.item["evidence"] is not None or "completed" in self.decisions:
                yield EvidenceEditor(self.client, self.item["evidence"], held.get("evidence"))
            if self.routes is not None:
                yield Label(Text("next: choose a route", style="bold"))
                options = [
                    (Text(f"{r['to']}" + (f" — {r['when']}" if r.get("when") else "")), r["to"])
                    for r in self.routes
                ]
                chosen = held.get("next") if held.get("next") in {r["to"] for r in self.routes} else None
                yield Select(options, prompt="route", id="route", compact=True, value=chosen or Select.NULL)
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
            yield TextArea(id="note", soft_wrap=True, placeholder="note")
        yield Static("", id="problem", classes="problem")
        yield Static("", id="changes")

    def compose_buttons(self) -> ComposeResult:
        yield Button("Send", id="submit", variant="primary", compact=True)
        yield Button("Re-read", id="reread", classes="hidden", compact=True)
        yield Button("Close", id="close", compact=True)

    def _context_text(self) -> Hanging:
        return Hanging(context_lines(self.entry, self.baseline, self.now(), self.palette, self.bar))

    def _show_context(self) -> None:
        self.query_one("#context", Static).update(self._context_text())
        found = evidence_of(self.entry, self.baseline)
        options = self.query_one("#context-evidence", OptionList)
        options.clear_options()
        options.add_options([Option(Text(label), id=str(i)) for i, (label, _) in enumerate(found)])
        options.display = bool(found)
        self.query_one("#context-evidence-label").display = bool(found)

    def on_mount(self) -> None:
        self._sync_sections()
        self._show_context()
        self.query_one("#confirm").display = False
        self.query_one("#decision", RadioSet).focus()
        self.run_worker(self._load_baseline(), group="baseline")

    async def _load_baseline(self) -> None:
        answer = await self.client.get_run(self.entry["runId"])
        if answer["ok"]:
            self.baseline = answer["data"]
        escalation, handoff = self.item["escalation"], self.item["handoff"]
        checked = (escalation is not None and "check" in escalation) or (
            handoff is not None and "check" in handoff
        )
        if self.check_bars is not None and (checked or self.baseline is not None):
            bars = await self.check_bars(self.entry["process"], int(self.entry["version"]))
            self.bar = bars(self.item["stepId"])
        self._show_context()

    @on(OptionList.OptionSelected, "#context-evidence")
    async def _open_evidence(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        label, item = evidence_of(self.entry, self.baseline)[int(event.option_id or 0)]
        url = item.get("url")
        if item["kind"] != "file" or not url:
            self.post_message(CopyRequested(url or item["ref"]))
            return
        fetched = await self.client.fetch_file(url)
        if not isinstance(fetched, FetchedFile):
            self._problem([f"{label}: could not be read", *error_lines(fetched)], self.palette.error)
            return
        try:
            text = fetched.content.decode("utf-8")
        except UnicodeDecodeError:
            self._problem([f"{label}: not text; save it from the run's Evidence tab"], self.palette.warning)
            return
        self.post_message(ViewTextRequested(f"{fetched.file_name or item['ref']} · {label}", text))

    @property
    def decision(self) -> Decision | None:
        pressed = self.query_one("#decision", RadioSet).pressed_button
        if pressed is None:
            return None
        return next((d for d in self.decisions if f"decision-{d}" == pressed.id), None)

    @on(DecisionSet.Chosen)
    def _chosen(self, event: DecisionSet.Chosen) -> None:
        """A decision picked by its key: go to the first field it needs."""
        event.stop()
        target = self.first_needed(event.decision)
        if target is not None:
            self.call_after_refresh(target.focus)  # shown only now: focusable after the next layout

    def first_needed(self, decision: str) -> Widget | None:
        """The first field this decision still needs filled in, or None when nothing is missing."""
        if decision in NOTE_DECISIONS:
            note = self.query_one("#note", TextArea)
            return note if not note.text.strip() else None
        if decision != "completed":
            return None
        if self.candidate is not None and self.query_one("#use-candidate", GlyphCheckbox).value:
            return None
        return self.query_one("#output", FieldsForm).first_empty() or (
            self.query_one("#route", Select)
            if self.routes and self.query_one("#route", Select).value is Select.NULL
            else None
        )

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
        target = (
            f"{verb} {self.item['stepId']} on {short_id(self.entry['runId'])}"
            if decision
            else "Send (choose a decision)"
        )
        submit = self.query_one("#submit", Button)
        submit.label = Text(target)
        submit.variant = "error" if decision in ("rejected", "failed") else "primary"
        submit.refresh(layout=True)  # a Button sizes to its label, but a new label alone does not lay it out
        self._cancel_confirmation()

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
            note = self.query_one("#note", TextArea).text.strip()
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
        """Check locally, then ask the one-line confirmation (or send an approval straight away when
        the setting says so)."""
        arguments, issues = self.arguments()
        if arguments is None or issues:
            self._problem(["Not sent; fix these first:", *issues], self.palette.error)
            return
        self._problem([])
        decision = arguments["decision"]
        if decision == "approved" and not self.confirm_approvals:
            await self.send(arguments)
            return
        self.pending = arguments
        confirm = self.query_one("#confirm", Confirm)
        confirm.update(Text(confirmation(decision, self.entry), style="bold"))
        confirm.display = True
        confirm.focus()

    def _cancel_confirmation(self) -> None:
        self.pending = None
        if self.is_mounted:
            self.query("#confirm").set(display=False)

    @on(Confirm.Answered)
    async def _answered(self, event: Confirm.Answered) -> None:
        event.stop()
        arguments = self.pending
        self._cancel_confirmation()
        if event.yes and arguments is not None:
            await self.send(arguments)
        else:
            self.query_one("#decision", RadioSet).focus()

    async def send(self, arguments: DecideArguments) -> None:
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
