"""The Demo agents tab: one row per agent with its token identity, current step and last call, the demo
clock, the story's cues (shown once as a toast); `space` pauses or resumes the selected agent."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.containers import Vertical

from console import messages
from demo.actors.control import AgentState, DemoControl
from demo.fronts.pane import DEMO_ACTIONS, DemoPane
from demo.stories.presenter import ConsolePresenter, PresenterError
from tests.demo.demo_support import until


class FakeControls:
    """The controls of a demo with two agents and a story, answering as DemoPresenter does."""

    def __init__(self) -> None:
        self.control_ = DemoControl()
        for name in ("agent-ada", "agent-bo"):
            self.control_.add(AgentState(name, identity=f"{name} · token sha256:0000{name[-2:]}"))
        self.cues: list[str] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def control(self, action: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((action, arguments))
        message = ""
        if action == "agent":
            try:
                paused = self.control_.toggle(arguments["name"])
            except KeyError as exc:
                raise PresenterError(str(exc.args[0])) from None
            message = f"{arguments['name']} {'paused' if paused else 'resumed'}."
        return {
            "paused": False,
            "speed": 60.0,
            "now": "2026-10-06T09:00:00Z",
            "agents": [s.row() for s in self.control_.agents],
            "left": ["r_1 · verify_order"],
            "moments": [],
            "story": {
                "name": "operator-triage",
                "title": "Refund triage in five minutes",
                "user": "operator",
                "done": 1,
                "moments": 5,
                "log": ["[+0:00:00] lost-order: An escalation with a realistic note on r_1"],
                "cues": list(self.cues),
            },
            "line": "3 runs started",
            "message": message,
        }


class PaneApp(App[None]):
    def __init__(self, controls: FakeControls) -> None:
        super().__init__()
        self.presenter = ConsolePresenter(controls, 60.0)
        self.notices: list[str] = []

    def compose(self) -> ComposeResult:
        yield DemoPane(self.presenter)

    @on(messages.Notice)
    def _notice(self, message: messages.Notice) -> None:
        self.notices.append(message.text)


class HiddenPaneApp(PaneApp):
    """The pane in a container that is hidden until the test shows it, as a tab not shown is."""

    def compose(self) -> ComposeResult:
        holder = Vertical(id="holder")
        holder.display = False
        with holder:
            yield DemoPane(self.presenter)


def rows(pane: DemoPane) -> list[list[str]]:
    table = pane.table
    return [[cell.plain for cell in table.row_cells(key) or ()] for key in table.keys]


async def test_rows_show_identity_step_and_last_call_and_space_pauses_one_agent() -> None:
    controls = FakeControls()
    ada = controls.control_.state("agent-ada")
    ada.hold("screening · check_vendor", "r_0123456789")
    ada.called("09:01:02 claim check_vendor → ok")
    ada.act("claimed screening · check_vendor", status="working")
    app = PaneApp(controls)
    async with app.run_test(size=(200, 24)) as pilot:
        pane = app.query_one(DemoPane)
        pane.table.focus()
        await pane.refresh_rows()
        await pilot.pause()
        assert rows(pane) == [
            [
                "agent-ada",
                "agent-ada · token sha256:0000da",
                "working",
                "screening · check_vendor · r_0123456…",
                "09:01:02 claim check_vendor → ok",
                "0/0/0",
            ],
            ["agent-bo", "agent-bo · token sha256:0000bo", "starting", "—", "—", "0/0/0"],
        ]
        assert str(app.query_one("#demo-status").render()) == (
            "demo clock 60x · 2026-10-06T09:00:00Z · 3 runs started · left to you: r_1 · verify_order"
        )
        await pilot.press("space")
        await until(lambda: "agent-ada paused." in app.notices)
        assert (ada.paused, ada.status) == (True, "paused")
        actions = [call for call in controls.calls if call[0] != "status"]  # the pane reads it on a timer too
        assert actions == [("agent", {"name": "agent-ada"})]
        assert app.notices == ["agent-ada paused."]
        assert rows(pane)[0][2] == "paused"
        controls.cues.append("return the escalation of verify_order on r_1 with the note: Try again.")
        await pane.refresh_rows()
        await pane.refresh_rows()
        # the pane's messages arrive in order: once this one is in, every notice posted before it is
        pane.post_message(messages.Notice("read back"))
        await until(lambda: app.notices[-1] == "read back")
        cued = [n for n in app.notices if n.startswith("Your turn:")]
        assert cued == [
            "Your turn: return the escalation of verify_order on r_1 with the note: Try again."
        ], "a cue is a toast once"
        story = str(app.query_one("#demo-story").render())
        assert story.splitlines() == [
            "story operator-triage: Refund triage in five minutes (as the operator) · 1/5 moments",
            "your turn: return the escalation of verify_order on r_1 with the note: Try again.",
            "[+0:00:00] lost-order: An escalation with a realistic note on r_1",
        ]


def test_the_keys_are_described_for_the_help() -> None:
    assert [(a.id, a.keys, a.action) for a in DEMO_ACTIONS] == [("demo.toggle", "space", "toggle_agent")]


async def test_a_hidden_pane_draws_nothing_yet_tells_the_cues_and_draws_once_shown() -> None:
    controls = FakeControls()
    controls.cues.append("approve r_1")
    app = HiddenPaneApp(controls)
    async with app.run_test(size=(200, 24)):
        pane = app.query_one(DemoPane)
        await pane.refresh_rows()
        await until(lambda: app.notices == ["Your turn: approve r_1"])
        assert (rows(pane), str(app.query_one("#demo-status").render())) == ([], "")
        app.query_one("#holder").display = True
        await until(lambda: len(rows(pane)) == 2)
        assert str(app.query_one("#demo-status").render()) == (
            "demo clock 60x · 2026-10-06T09:00:00Z · 3 runs started · left to you: r_1 · verify_order"
        )
