"""`apc demo --web`: the live demo's console in a browser, one console per browser tab.

Two kinds of process: the demo server (`demo.fronts.web_server`: engine, MCP endpoint, agents, people,
events, runs) started once, and textual-serve's web server here, which starts one console process per
browser tab (`demo.fronts.web_tab`) in remote mode against the demo's endpoint. textual-serve's server
runs its own loop and pipes each console to its tab; the demo never shares a loop with it.

The page is on 127.0.0.1 unless `--host` says otherwise; `--port 0` takes any free port. The port is
bound before anything starts, so a taken port is a one-line error. SIGINT and SIGTERM close the tabs'
consoles, then stop the demo server (which removes its temporary data folder).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import signal
import socket
import sys
from typing import Any

from aiohttp import web
from textual_serve.server import Server

from demo.fronts.web_server import Ready
from demo.fronts.web_tab import READY_ENV

DEFAULT_PORT = 8000
READY_SECONDS = 60.0
"""How long the demo server may take to publish the samples and start its endpoint."""
STOP_SECONDS = 10.0
"""How long the demo server may take to stop (agents finish their calls) before it is killed."""
TAB_STOP_SECONDS = 2.0
"""How long the web server waits for open tabs when it stops; their consoles are told to quit."""
TITLE = "apc demo"


class WebError(Exception):
    """Something that stops the web demo, said in one line."""


class DemoWebServer(Server):
    """textual-serve's server with apc's start-up line instead of its banner, and page links that
    follow the address the browser used, so `--host 0.0.0.0` works from another machine."""

    async def on_startup(self, app: web.Application) -> None:
        return None

    async def handle_index(self, request: web.Request) -> Any:
        # The page embeds absolute URLs (script, websocket). Nothing awaits between setting the base
        # and rendering, so concurrent requests cannot see each other's.
        self.public_url = f"{request.scheme}://{request.host}"
        return await super().handle_index(request)


def listening_socket(host: str, port: int) -> socket.socket:
    """The page's socket, bound now: a taken port is an error before the demo starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        hint = "; choose another with --port N, or --port 0 for any free port" if port else ""
        raise WebError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from None
    return sock


def page_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def server_command(args: argparse.Namespace, speed: float) -> list[str]:
    command = [sys.executable, "-m", "demo.fronts.web_server", "--speed", f"{speed:g}"]
    command += ["--seed", str(args.seed), "--agents", str(args.agents)]
    if args.data is not None:
        command += ["--data", str(args.data)]
    return command


def run_web(args: argparse.Namespace, speed: float) -> int:
    """The `apc demo --web` entry point: an exit status, 0 after a requested stop."""
    try:
        sock = listening_socket(args.host, args.port)
    except WebError as error:
        print(f"apc demo: error: {error}", file=sys.stderr)
        return 1
    try:
        return asyncio.run(serve(args, speed, sock))
    except WebError as error:
        print(f"apc demo: error: {error}", file=sys.stderr)
        return 1
    finally:
        sock.close()


async def serve(args: argparse.Namespace, speed: float, sock: socket.socket) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # Its own session: a Ctrl+C in the terminal reaches this process only, which stops the demo in order.
    child = await asyncio.create_subprocess_exec(
        *server_command(args, speed),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        ready = await _ready(child, stop)
        if ready is None:
            return 0
        return await _serve_tabs(ready, args.host, sock, child, stop)
    finally:
        await _stop_server(child)


async def _ready(child: asyncio.subprocess.Process, stop: asyncio.Event) -> Ready | None:
    """The demo server's Ready line; None if a stop was asked for first."""
    assert child.stdout is not None
    line_task = asyncio.ensure_future(child.stdout.readline())
    stop_task = asyncio.ensure_future(stop.wait())
    done, _ = await asyncio.wait({line_task, stop_task}, timeout=READY_SECONDS, return_when="FIRST_COMPLETED")
    for task in (line_task, stop_task):
        task.cancel()
    if stop_task in done:
        return None
    if line_task not in done:
        raise WebError(f"the demo server did not start within {READY_SECONDS:g} seconds")
    line = line_task.result().decode()
    if not line.strip():
        code = await child.wait()
        raise WebError(f"the demo server stopped while starting (exit status {code})")
    return Ready.from_line(line)


async def _serve_tabs(
    ready: Ready, host: str, sock: socket.socket, child: asyncio.subprocess.Process, stop: asyncio.Event
) -> int:
    os.environ[READY_ENV] = ready.line()
    command = shlex.join([sys.executable, "-m", "demo.fronts.web_tab"])
    server = DemoWebServer(command, title=TITLE)
    runner = web.AppRunner(await server._make_app(), handle_signals=False, access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock, shutdown_timeout=TAB_STOP_SECONDS).start()
    print(
        f"apc demo --web: open {page_url(host, sock.getsockname()[1])} in a browser "
        f"(demo endpoint {ready.url}, data in {ready.data_dir}); Ctrl+C stops",
        flush=True,
    )
    ended = asyncio.ensure_future(child.wait())
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({ended, stopped}, return_when="FIRST_COMPLETED")
    finally:
        stopped.cancel()
        await runner.cleanup()
    if ended.done() and not stop.is_set():
        raise WebError(f"the demo server stopped (exit status {ended.result()})")
    ended.cancel()
    return 0


async def _stop_server(child: asyncio.subprocess.Process) -> None:
    """Ask the demo server to stop (end of input, then SIGTERM); kill it if it does not in time."""
    if child.returncode is not None:
        return
    if child.stdin is not None:
        child.stdin.close()
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(child.wait(), STOP_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        await child.wait()
