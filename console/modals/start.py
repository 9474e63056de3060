"""Start a run: the inputs form comes from the process's declared inputs; live or test mode."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Button, Label, RadioButton, RadioSet, Static

from console.client import Client
from console.client.wire import ProcessSummary, RunMode, StartRunResult
from console.modals.common import Dialog
from console.views.answer import error_lines
from console.views.palette import Palette
from console.widgets.fields import FieldsForm, declared_fields


class StartRunDialog(Dialog[StartRunResult]):
    """Dismisses with the started run's view, or None when closed without starting one."""

    def __init__(
        self, client: Client, process: ProcessSummary, palette: Palette, *, people: list[str]
    ) -> None:
        super().__init__(f"Start a run of {process['name']} v{process['version']}", id="start-run")
        self.client = client
        self.process = process
        self.palette = palette
        self.people = people

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="start-body"):
            yield Static(Text(self.process["description"], style="dim"))
            yield FieldsForm(
                declared_fields(self.process["inputs"], "inputs"),
                "inputs",
                people=self.people,
                id="inputs",
            )
            yield Label(Text("mode", style="bold"))
            with RadioSet(id="mode"):
                yield RadioButton("live", value=True, id="mode-live")
                yield RadioButton("test: agents cause no real effects, no real notifications", id="mode-test")
            yield Static("", id="problem", classes="problem")

    def compose_buttons(self) -> ComposeResult:
        yield Button("Start", id="submit", variant="primary", compact=True)
        yield Button("Close", id="close", compact=True)

    async def action_submit(self) -> None:
        inputs, issues = self.query_one("#inputs", FieldsForm).collect()
        problem = self.query_one("#problem", Static)
        if issues:
            problem.update(Text("\n".join(["Not sent; fix these first:", *issues]), style=self.palette.error))
            return
        pressed = self.query_one("#mode", RadioSet).pressed_button
        mode: RunMode = "test" if pressed is not None and pressed.id == "mode-test" else "live"
        answer = await self.client.start_run(self.process["name"], inputs, mode=mode)
        if answer["ok"]:
            self.dismiss(answer["data"])
            return
        problem.update(
            Text(
                "\n".join(["The server did not start the run:", *error_lines(answer)]),
                style=self.palette.error,
            )
        )
