"""The first screen: written once, whole (the first page of the queue, the footer's keys), and the
console is up as it is written. (`2` pressed at once: `test_cancel_asks_for_the_reason_naming_the_run`,
`test_a_tab_shown_as_the_console_comes_up_stays_shown`.)"""

from __future__ import annotations

from typing import Any

from textual.widgets._footer import FooterKey

from console.client.local import LocalClient
from console.screens.main import MainScreen
from engine.clock import ManualClock
from tests.console.console_support import Agent, make_app, press, settle


async def test_the_first_frame_shows_the_queue_and_the_keys_and_the_console_is_up_with_it(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    await agent.screen(await agent.start("screening", {"vendorName": "Acme"}))
    await agent.screen(await agent.start("screening", {"vendorName": "Bolt"}))
    app = make_app(client, clock)
    frames: list[tuple[int, list[str], bool]] = []
    display = app._display

    def written(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if isinstance(screen, MainScreen) and renderable is not None:
            keys = [key.key for key in screen.query(FooterKey)]
            frames.append((screen.work.table.row_count, keys, app.ready.is_set()))

    app._display = written  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
    # the first frame has the rows and the keys; the console is up once it is written, before any other
    assert frames[0] == (2, ["d", "o", "slash", "s", "question_mark", "r", "p", "q", "ctrl+p"], False)
    assert all(up for *_, up in frames[1:])


async def test_the_footer_keeps_its_keys_when_the_bindings_change_to_the_same_keys(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    await agent.screen(await agent.start("screening", {"vendorName": "Acme"}))
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await settle(pilot)
        keys = list(app.main.query(FooterKey))
        app.main.refresh_bindings()
        await settle(pilot)
        assert list(app.main.query(FooterKey)) == keys  # the same widgets: nothing built again
        await press(pilot, "2")
        assert [key.key for key in app.main.query(FooterKey)] != [key.key for key in keys]
