"""The demo agents pane: one row per agent, live; keys pause, resume and change speed."""

from __future__ import annotations

from textual.app import App, ComposeResult

from console.demo.control import AgentState, DemoControl
from console.demo.pane import DEMO_ACTIONS, DemoPane


class PaneApp(App[None]):
    def __init__(self, control: DemoControl) -> None:
        super().__init__()
        self.control = control

    def compose(self) -> ComposeResult:
        yield DemoPane(self.control, status=lambda: "demo clock 60x")


def control_of(*names: str) -> DemoControl:
    control = DemoControl()
    for name in names:
        control.add(AgentState(name))
    return control


def rows(pane: DemoPane) -> list[list[str]]:
    table = pane.table
    return [[cell.plain for cell in table.row_cells(key) or ()] for key in table.keys]


async def test_rows_follow_the_agents_and_keys_steer_them() -> None:
    control = control_of("agent-ada", "agent-bo")
    ada = control.state("agent-ada")
    ada.hold("screening · check_vendor", "r_1")
    ada.act("claimed screening · check_vendor", status="working")
    app = PaneApp(control)
    async with app.run_test(size=(140, 20)) as pilot:
        pane = app.query_one(DemoPane)
        pane.table.focus()
        await pilot.pause()
        assert rows(pane) == [
            [
                "agent-ada",
                "working",
                "screening · check_vendor",
                "1x",
                "0/0/0",
                "claimed screening · check_vendor",
            ],
            ["agent-bo", "starting", "—", "1x", "0/0/0", "starting"],
        ]
        await pilot.press("space")
        assert (ada.paused, ada.status) == (True, "paused")
        await pilot.press("plus")
        assert ada.speed == 2.0
        await pilot.press("minus", "minus")
        assert ada.speed == 0.5
        await pilot.press("a")
        assert [s.paused for s in control.agents] == [True, True]
        await pilot.press("a")
        assert [s.paused for s in control.agents] == [False, False]
        control.state("agent-bo").act("submitted check_vendor", status="idle")
        pane.refresh_rows()
        await pilot.pause()
        assert rows(pane)[1] == ["agent-bo", "idle", "—", "1x", "0/0/0", "submitted check_vendor"]
        assert str(app.query_one("#demo-status").render()) == "demo clock 60x"


def test_the_keys_are_described_for_the_help() -> None:
    assert [(a.id, a.keys, a.action) for a in DEMO_ACTIONS] == [
        ("demo.toggle", "space", "toggle_agent"),
        ("demo.all", "a", "toggle_all"),
        ("demo.faster", "plus,equals_sign", "faster"),
        ("demo.slower", "minus", "slower"),
    ]
