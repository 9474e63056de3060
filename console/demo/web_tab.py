"""One browser tab of `apc demo --web`: the console in remote mode against the demo's MCP endpoint.

textual-serve starts this module once per browser tab (`python -m console.demo.web_tab`), with the demo
server's `Ready` line in the environment (`APC_DEMO_READY`), never on a command line where `ps` would
show the operator's token. The console is exactly `apc --server URL --token TOKEN`, plus two things a
remote console cannot know: who the token is (the demo's operator) and the demo clock, mirrored from
the server's reading so that ages and due times count in demo minutes.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime

from console.demo.web_server import Ready

READY_ENV = "APC_DEMO_READY"


class MirroredClock:
    """The demo server's fast clock, read in another process: its reading at a known real time, moved on
    by `speed` times the real time since."""

    def __init__(self, demo_now: float, wall: float, speed: float) -> None:
        self._demo_now = demo_now
        self._wall = wall
        self._speed = speed

    def now(self) -> datetime:
        return datetime.fromtimestamp(self._demo_now + (time.time() - self._wall) * self._speed, UTC)


def notices(ready: Ready) -> list[str]:
    return [
        f"Demo in the browser: {ready.processes} sample processes, {ready.agents} agents over MCP, "
        f"demo clock {ready.speed:g}x. You are the operator: escalations come to you.",
    ]


def main() -> int:
    from console.app import ApcApp, Session
    from console.client.remote import RemoteClient
    from engine.identity import Identity

    line = os.environ.get(READY_ENV)
    if not line:
        print(f"{READY_ENV} is not set: this module is started by `apc demo --web`", file=sys.stderr)
        return 2
    ready = Ready.from_line(line)
    client = RemoteClient(ready.url, ready.token)
    client.identity = Identity("person", ready.operator, operator=True)
    session = Session(
        client,
        f"demo · {ready.url}",
        clock=MirroredClock(ready.demo_now, ready.wall, ready.speed),
        close=client.close,
        notices=notices(ready),
    )
    app = ApcApp(session)
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
