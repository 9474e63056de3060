"""Presenter controls in the console: offered only with a live demo's presenter, each a key and a
palette entry; the header shows the demo clock's speed and PAUSED; "leave this to me" acts on the
selected work item, the selected run or the open run; the stage menu lists the moments."""

from __future__ import annotations

from textual.widgets import OptionList

from console.app import ApcApp
from console.client.local import LocalClient
from console.keys.registry import ACTIONS
from console.live.session import Session
from console.modals.common import ChoiceDialog
from console.screens.run import RunScreen
from console.settings.config import ConsoleConfig
from console.settings.themes import load_themes
from engine.clock import ManualClock
from tests.console.console_support import Agent, make_app, press, settle, shown


class FakePresenter:
    """Records what the console asked and answers as the demo's presenter does."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, str]]] = []
        self._paused = False
        self._speed = 90.0

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def moments(self) -> list[tuple[str, str]]:
        return [("escalation", "An escalation with a realistic note"), ("overdue", "An item going overdue")]

    async def control(self, action: str, arguments: dict[str, str]) -> tuple[bool, str]:
        self.asked.append((action, arguments))
        if action == "pause":
            self._paused = True
            return True, "Demo paused."
        if action == "resume":
            self._paused = False
            return True, "Demo resumed."
        if action == "faster":
            self._speed *= 2
            return True, f"Demo clock {self._speed:g}x real time."
        if action == "stage":
            return False, "An item going overdue: customer-refund is not published in this demo"
        return True, f"{action} {arguments}"


def demo_app(client: LocalClient, clock: ManualClock, presenter: FakePresenter) -> ApcApp:
    session = Session(client, "demo · test", clock=clock, presenter=presenter)
    return ApcApp(session, live=False, cursor_blink=False, config=ConsoleConfig(), themes=load_themes())


PRESENTER_ACTIONS = ["demo_pause", "demo_faster", "demo_slower", "demo_leave", "demo_stage"]


def test_each_control_is_in_the_registry_for_the_keys_help_and_palette() -> None:
    found = [(s.id, s.keys, s.action, s.needs) for s in ACTIONS if s.action in PRESENTER_ACTIONS]
    assert found == [
        ("app.demo_pause", "Z", "demo_pause", "presenter"),
        ("app.demo_faster", "plus,equals_sign", "demo_faster", "presenter"),
        ("app.demo_slower", "minus", "demo_slower", "presenter"),
        ("app.demo_leave", "L", "demo_leave", "presenter"),
        ("app.demo_stage", "D", "demo_stage", "presenter"),
    ]


async def test_without_a_presenter_the_controls_are_not_offered(
    client: LocalClient, clock: ManualClock
) -> None:
    app = make_app(client, clock)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.ready.wait()
        assert [app.check_action(a, ()) for a in PRESENTER_ACTIONS] == [False] * 5
        await press(pilot, "Z")
        assert "DEMO" not in shown(app, "#status")


async def test_keys_pause_speed_leave_and_stage(
    client: LocalClient, clock: ManualClock, agent: Agent
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id)
    presenter = FakePresenter()
    app = demo_app(client, clock, presenter)
    async with app.run_test(size=(180, 44)) as pilot:
        await app.ready.wait()
        assert [app.check_action(a, ()) for a in PRESENTER_ACTIONS] == [True] * 5
        assert " · demo 90x" in shown(app, "#status")
        await press(pilot, "Z")
        assert presenter.asked[-1] == ("pause", {})
        assert shown(app, "#status").endswith(" · demo 90x · DEMO PAUSED (Z)")
        await press(pilot, "Z", "plus")
        assert presenter.asked[-2:] == [("resume", {}), ("faster", {})]
        assert "DEMO PAUSED" not in shown(app, "#status") and " · demo 180x" in shown(app, "#status")
        await press(pilot, "minus")
        assert presenter.asked[-1] == ("slower", {})

        await press(pilot, "L")
        assert presenter.asked[-1] == ("leave", {"runId": run_id, "stepId": "approve"}), "the selected item"
        await press(pilot, "2", "L")
        assert presenter.asked[-1] == ("leave", {"runId": run_id}), "the selected run"
        await press(pilot, "enter")
        assert isinstance(app.screen, RunScreen)
        await press(pilot, "L")
        assert presenter.asked[-1] == ("leave", {"runId": run_id}), "the open run"
        await press(pilot, "escape")

        await press(pilot, "D")
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        options = dialog.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)] == [
            "An escalation with a realistic note",
            "An item going overdue",
        ]
        await press(pilot, "down", "enter")
        assert presenter.asked[-1] == ("stage", {"moment": "overdue"})
        assert app.toasts[-1] == "An item going overdue: customer-refund is not published in this demo"


async def test_pausing_the_demo_shows_the_ages_at_the_paused_time_and_they_stand_still(
    client: LocalClient, clock: ManualClock, agent: Agent
) -> None:
    """The screen shows ages as of its last read, which can be a refresh interval (minutes of a fast
    demo clock) before the pause: `Z` redraws them at the time the clock stopped, so a later redraw
    (a decision, a refresh) finds nothing moved."""
    first = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(first)
    second = await agent.start("screening", {"vendorName": "Globex"})
    await agent.screen(second)
    presenter = FakePresenter()
    app = demo_app(client, clock, presenter)
    async with app.run_test(size=(180, 44)) as pilot:
        await app.ready.wait()
        await settle(pilot)  # the rows are dated just after the first screen is written
        table = app.main.work.table

        def ages() -> list[str]:
            return [str((table.row_cells(key) or ())[5]) for key in table.keys]

        assert ages() == ["0s", "0s"]
        clock.advance(minutes=6)  # the demo clock runs on after the last read...
        await press(pilot, "Z")  # ...and stops here: the ManualClock is not advanced again below
        assert presenter.asked[-1] == ("pause", {})
        assert ages() == ["6m", "6m"]
        await press(pilot, "enter", "a", "ctrl+s", "y")
        assert ([key.split("/")[0] for key in table.keys], ages()) == ([second], ["6m"])
