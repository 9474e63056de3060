"""The server half of `apc demo --web`, in a process of its own: the demo engine, its MCP endpoint, the
demo agents, people, events and the stream of runs, as `apc demo` runs them beside the console.

It is a separate process because textual-serve's web server and the console processes it starts have
nothing to do with the demo's loop: a slow browser never slows the agents, and the demo's load never
delays a key press. The parent (`demo.fronts.web`) reads one JSON line from standard output, `Ready`:
where the endpoint is, the operator's token, and the demo clock, so each browser tab's console can
connect as the operator and show ages on the demo's own time. The process stops on SIGINT, SIGTERM or
when its standard input closes (the parent is gone), and removes its temporary data folder.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from demo.actors.people import PeopleBehaviour
from demo.system import DemoSettings, DemoSystem


@dataclass(frozen=True)
class Ready:
    url: str
    """The demo's MCP endpoint."""
    token: str
    """The operator's bearer token."""
    operator: str
    demo_now: float
    """The demo clock at `wall`, as a POSIX timestamp."""
    wall: float
    """The real time when `demo_now` was read."""
    speed: float
    processes: int
    agents: int
    data_dir: str

    def line(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_line(cls, line: str) -> Ready:
        return cls(**json.loads(line))


def settings_from(argv: list[str]) -> DemoSettings:
    parser = argparse.ArgumentParser(prog="python -m demo.fronts.web_server")
    parser.add_argument("--speed", type=float, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--agents", type=int, required=True)
    parser.add_argument("--data", type=Path)
    args = parser.parse_args(argv)
    return DemoSettings(
        data_dir=args.data,
        speed=args.speed,
        seed=args.seed,
        agents=args.agents,
        people=PeopleBehaviour(play_operator=False),
    )


async def serve(settings: DemoSettings) -> int:
    system = await DemoSystem.open(settings)
    try:
        system.start()
        ready = Ready(
            url=system.server.url,
            token=system.org.tokens[system.org.operator_email],
            operator=system.org.operator_email,
            demo_now=system.clock.now().timestamp(),
            wall=time.time(),
            speed=settings.speed,
            processes=len(system.processes),
            agents=len(system.agents),
            data_dir=str(system.data_dir),
        )
        sys.stdout.write(ready.line() + "\n")
        sys.stdout.flush()
        await _until_stopped()
    finally:
        await system.close()
    return 1 if system.failures else 0


async def _until_stopped() -> None:
    """Wait for SIGINT, SIGTERM or the end of standard input, whichever comes first."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    watcher = asyncio.create_task(_stdin_closed(stop))
    try:
        await stop.wait()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def _stdin_closed(stop: asyncio.Event) -> None:
    """Set `stop` at the end of standard input (a pipe from the parent), read without a thread."""
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        while await reader.read(4096):
            pass
    finally:
        transport.close()
    stop.set()


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(serve(settings_from(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    sys.exit(main())
