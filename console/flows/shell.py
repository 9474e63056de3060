"""What a flow is handed: the app as a small shell, and the parts of the connection it reads through.

A flow never imports the app. It asks the `Shell` for Textual's services (a screen pushed, a worker
run, the clipboard), for what is on screen now, and to tell the operator; everything else comes down
in the `Context` the app builds once connected. `ApcApp` is the shell.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from textual.notifications import SeverityLevel
from textual.screen import Screen, ScreenResultCallbackType
from textual.timer import Timer
from textual.widget import AwaitMount
from textual.worker import Worker

from console.client import Client, Envelope, Failure
from console.keys.scoped import Permissions
from console.live.documents import Documents
from console.live.lists import EndedRuns, Lists
from console.live.presenter import Presenter
from console.modals.common import AnswerDialog
from console.screens.main import MainScreen
from console.settings.config import ConsoleConfig
from console.views.palette import Palette

T = TypeVar("T")


class Shell(Protocol):
    """The app, as the flows see it."""

    @property
    def palette(self) -> Palette:
        """The current theme's styles (the theme may change while a flow runs)."""
        ...

    @property
    def config(self) -> ConsoleConfig: ...

    @property
    def ready(self) -> asyncio.Event:
        """Set once the first screen is written."""
        ...

    @property
    def main(self) -> MainScreen: ...

    @property
    def screen(self) -> Screen[object]:
        """The screen on top."""
        ...

    @property
    def is_running(self) -> bool:
        """False once the app closes (its workers cancelled, its timers about to stop)."""
        ...

    def now(self) -> datetime:
        """The time by the connection's clock (a demo's runs faster)."""
        ...

    def is_screen_installed(self, screen: str) -> bool: ...

    def push_screen(
        self, screen: Screen[T], callback: ScreenResultCallbackType[T] | None = None
    ) -> AwaitMount: ...

    def set_timer(self, delay: float, callback: Callable[[], object]) -> Timer: ...

    def run_while_open(
        self, work: Callable[[], Awaitable[object]], *, group: str, exclusive: bool = False
    ) -> Worker[None]: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def toast(
        self,
        message: str,
        *,
        severity: SeverityLevel = "information",
        live: bool = False,
        group: str | None = None,
        count: int = 1,
    ) -> None: ...

    def report_error(self, source: str, answer: Failure) -> None: ...

    def show_notices(self) -> None:
        """Draw the latest notice on the screen on top (one just pushed has none yet)."""
        ...

    def update_status(self) -> None: ...

    def repaint(self) -> None:
        """Redraw what is on screen from what was last read."""
        ...

    async def reload_all(self, *, full: bool = True) -> None:
        """Read what is on screen again and show it."""
        ...

    def reload_soon(self) -> None:
        """`reload_all` in a worker of its own, replacing one under way."""
        ...

    def open_run(self, run_id: str) -> None: ...


@dataclass(frozen=True)
class Context:
    """What every flow is handed, built by the app once connected."""

    shell: Shell
    client: Client
    permissions: Permissions
    documents: Documents
    lists: Lists
    ended_runs: EndedRuns
    """Runs cancelled here, so that the live news does not tell their end again."""
    presenter: Presenter | None = None
    """The controls of a live demo, when the console shows one."""

    def people(self) -> list[str]:
        return [identity.id for identity in self.client.people()]


def show_answer(shell: Shell, title: str, answer: Envelope[T], summary: Callable[[T], str]) -> None:
    """Success is a toast with the new state in `summary`'s words; an error opens a dialog with
    every issue."""
    if answer["ok"]:
        shell.toast(f"{title}: {summary(answer['data'])}")
    else:
        shell.push_screen(AnswerDialog(title, answer))
