"""Small dialogs: ask for a reason, show the server's answer, pick from a list, enter a path, read text.

Every dialog shows server data as plain text and closes with Escape; a dialog that sends something
names what it acts on in its title.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from console.client import Failure
from console.keys.registry import bindings
from console.keys.scoped import Scoped
from console.views.answer import error_lines

T = TypeVar("T")


class Dialog(Scoped, ModalScreen[T], Generic[T]):
    """A modal with a title, a body and buttons; `submit` and `close` come from the registry."""

    SCOPE = "modal"
    BINDINGS = bindings("modal")

    def __init__(self, title: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.dialog_title = title

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.dialog_title, style="bold"), classes="dialog-title")
            yield from self.compose_body()
            with Horizontal(classes="buttons"):
                yield from self.compose_buttons()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def compose_buttons(self) -> ComposeResult:
        yield Button("Close", id="close", compact=True)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("close", "submit"):
            event.stop()
            await self.run_action(str(event.button.id))

    def action_close(self) -> None:
        self.dismiss(None)

    async def action_submit(self) -> None:
        self.action_close()


class ReasonDialog(Dialog[str]):
    """Asks for the reason or note the protocol records, naming what the action will act on."""

    def __init__(
        self, title: str, subject: Sequence[str], *, label: str = "reason", confirm: str = "Confirm"
    ) -> None:
        super().__init__(title)
        self.subject = list(subject)
        self.label = label
        self.confirm = confirm

    def compose_body(self) -> ComposeResult:
        yield Static(Text("\n".join(self.subject)), classes="subject")
        yield Input(placeholder=f"{self.label} (required)", id="reason")
        yield Static("", id="problem", classes="problem")

    def compose_buttons(self) -> ComposeResult:
        yield Button(self.confirm, id="submit", variant="error", compact=True)
        yield Button("Back", id="close", compact=True)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        await self.run_action("submit")

    async def action_submit(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self.query_one("#problem", Static).update(Text(f"{self.label}: required"))
            return
        self.dismiss(reason)


class AnswerDialog(Dialog[None]):
    """An answer that was not a success: the error code, its message and every issue."""

    def __init__(self, title: str, answer: Failure) -> None:
        super().__init__(title)
        self.answer = answer

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="answer"):
            yield Static(Text("\n".join(error_lines(self.answer)), style="bold"), id="answer")


class ChoiceDialog(Dialog[T]):
    def __init__(self, title: str, choices: Sequence[tuple[str, T]]) -> None:
        super().__init__(title)
        self.choices = list(choices)

    def compose_body(self) -> ComposeResult:
        yield OptionList(
            *(Option(Text(label), id=str(i)) for i, (label, _) in enumerate(self.choices)), id="choices"
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[int(event.option_id or 0)][1])


class PathDialog(Dialog[str]):
    def __init__(self, title: str, default: str = "", *, placeholder: str = "path") -> None:
        super().__init__(title)
        self.default = default
        self.placeholder = placeholder

    def compose_body(self) -> ComposeResult:
        yield Input(self.default, placeholder=self.placeholder, id="path")
        yield Static("", id="problem", classes="problem")

    def compose_buttons(self) -> ComposeResult:
        yield Button("OK", id="submit", variant="primary", compact=True)
        yield Button("Back", id="close", compact=True)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        await self.run_action("submit")

    async def action_submit(self) -> None:
        value = self.query_one("#path", Input).value.strip()
        if not value:
            self.query_one("#problem", Static).update(Text(f"{self.placeholder}: required"))
            return
        self.dismiss(value)


class TextDialog(Dialog[None]):
    """A read-only viewer for an evidence file or any long text."""

    def __init__(self, title: str, text: str) -> None:
        super().__init__(title)
        self.text = text

    def compose_body(self) -> ComposeResult:
        yield TextArea(self.text, read_only=True, soft_wrap=True, show_line_numbers=True, id="viewer")
