"""One browser tab of `apc demo --web`: the console in remote mode against the demo's MCP endpoint.

textual-serve starts this module once per browser tab (`python -m demo.fronts.web_tab`), with the demo
server's `Ready` line in the environment (`APC_DEMO_READY`), never on a command line where `ps` would
show the operator's token. The console is exactly `apc --server URL --token TOKEN`, plus two things a
remote console cannot know: who the token is (the demo's operator) and the demo clock, mirrored from
the server's reading so that ages and due times count in demo minutes; plus the presenter's controls
and the Demo agents tab, both through the demo server's `apc_demo_control`.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime

from demo.fronts.web_server import Ready
from demo.stories.presenter import ConsolePresenter, RemoteControls

READY_ENV = "APC_DEMO_READY"


class MirroredClock:
    """The demo server's clock, read in another process: its last reading at a known real time, moved
    on by its speed times the real time since (not at all while the demo is paused). The reading is
    the `Ready` line's until the presenter's status brings a newer one."""

    def __init__(self, ready: Ready, presenter: ConsolePresenter | None = None) -> None:
        self._ready = ready
        self._presenter = presenter

    def now(self) -> datetime:
        status = self._presenter.last if self._presenter is not None else None
        if status is None or self._presenter is None:
            demo_now, wall, speed = self._ready.demo_now, self._ready.wall, self._ready.speed
        else:
            demo_now = datetime.fromisoformat(status["now"].replace("Z", "+00:00")).timestamp()
            wall = self._presenter.read_at
            speed = 0.0 if status["paused"] else float(status["speed"])
        return datetime.fromtimestamp(demo_now + (time.time() - wall) * speed, UTC)


def notices(ready: Ready) -> list[str]:
    return [
        f"Demo in the browser: {ready.processes} sample processes, {ready.agents} agents over MCP, "
        f"demo clock {ready.speed:g}x. You are the operator: escalations come to you.",
    ]


def main() -> int:
    from console.app import ApcApp
    from console.client.remote import RemoteClient
    from console.live.session import ExtraPane, Session
    from demo.fronts.pane import DemoPane
    from engine.identity import Identity

    line = os.environ.get(READY_ENV)
    if not line:
        print(f"{READY_ENV} is not set: this module is started by `apc demo --web`", file=sys.stderr)
        return 2
    ready = Ready.from_line(line)
    client = RemoteClient(ready.url, ready.token)
    client.identity = Identity("person", ready.operator, operator=True)
    presenter = ConsolePresenter(RemoteControls(client.call), ready.speed)
    session = Session(
        client,
        f"demo · {ready.url}",
        clock=MirroredClock(ready, presenter),
        close=client.close,
        notices=notices(ready),
        presenter=presenter,
    )
    app = ApcApp(session, extra_panes=[ExtraPane("demo", "Demo agents", lambda: DemoPane(presenter))])
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
