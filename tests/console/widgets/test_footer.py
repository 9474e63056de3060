"""The footer's one rebuild per frame runs after the next refresh, when its screen may have closed
meanwhile (a run detail left with `esc` just as its run was shown): that rebuild is let go."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.screen import Screen

from console.widgets.footer import Footer


class Keyed(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [("x", "nothing", "Nothing")]

    def compose(self) -> ComposeResult:
        yield Footer()


async def test_a_rebuild_that_comes_after_the_screen_closed_is_let_go() -> None:
    app: App[None] = App()
    async with app.run_test() as pilot:
        screen = Keyed()
        await app.push_screen(screen)
        await pilot.pause()
        footer = screen.query_one(Footer)
        await app.pop_screen()
        await pilot.pause()
        assert not footer.is_attached
        await footer._recompose_once()  # as Textual calls it after a refresh that came too late
        assert app.is_running and app.return_code is None
