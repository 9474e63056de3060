"""`apc serve`: the engine as a standalone MCP server for agents and people on other machines.

Everything that can be wrong with the configuration is found before the server starts: the org
config (and its `[oauth]` and `[check]` tables), the identity provider's keys, the evaluator (its key
variable, its answers file), and every process the config publishes. Then it serves until SIGINT or
SIGTERM, applying due timers twice a second of real time, and within WAKE_SECONDS of another server's
commit on a shared database.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from engine.clock import rfc3339
from engine.datafolder import DataFolderInUse, default_data_dir
from engine.http import logs
from engine.org import ConfigError, OrgConfig
from engine.store.base import StoreUnavailable
from engine.store.migrations import SchemaError
from engine.store.urls import is_postgres_url, redacted

if TYPE_CHECKING:
    from engine.core import Engine
    from engine.http.app import RunningServer

log = logging.getLogger("apc.serve")

HELP = "run the process server: the MCP endpoint for agents and people"
DESCRIPTION = (
    "Check the org config, publish its processes (unchanged ones keep their version), and serve\n"
    "the tools over MCP (Streamable HTTP) at /mcp until SIGINT or SIGTERM. Also served: /healthz\n"
    "(the process is up), /readyz (the store answers) and /metrics (Prometheus). One log line per\n"
    "HTTP request: method, path, status, identity, the tool calls it carried, duration."
)
EPILOG = (
    "exit status:\n"
    "  0  stopped by SIGINT or SIGTERM\n"
    "  1  the server could not start (for example, the port is taken)\n"
    "  2  the configuration is wrong: the message names the key, or the process and its issues\n\n"
    "examples:\n"
    "  apc serve --config org.toml\n"
    "  apc serve --config org.toml --host 0.0.0.0 --allow-host agents.example.com \\\n"
    "            --public-url https://agents.example.com"
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
TICK_SECONDS = 0.5
WAKE_SECONDS = 0.025
"""Other servers' commits wake this one to apply what is due at most this often: a burst of them costs a
tick per window rather than one each (with N servers, N-1 ticks per commit), and a timer one of them
made due waits at most this long."""
DEFAULT_PORT = 8765


@dataclass(frozen=True)
class ServeOptions:
    config: Path
    data: Path | None = None
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    speed: float = 1.0
    public_url: str | None = None
    allow_host: list[str] = field(default_factory=list)
    database: str | None = None
    """A postgresql:// URL (from --database or APC_DATABASE_URL); None: the org config's, else SQLite."""
    migrate: bool = True


def _speed(value: str) -> float:
    try:
        speed = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not speed > 0 or speed == float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number")
    return speed


def port_number(value: str) -> int:
    """A TCP port for argparse: 0 to 65535, where 0 means any free port."""
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}")
    return int(value)


def _public_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(f"expected an http(s) base URL, got {value!r}")
    return value.rstrip("/")


def database_url(value: str) -> str:
    if not is_postgres_url(value):
        raise argparse.ArgumentTypeError("expected a postgresql:// URL")
    return value


def add_database_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        type=database_url,
        metavar="URL",
        help="a PostgreSQL database several servers share (default: $APC_DATABASE_URL, else the org "
        "config's [server] database, else SQLite in the data folder)",
    )


def database_from(args: argparse.Namespace) -> str | None:
    """--database, else APC_DATABASE_URL (checked like --database), else None (the org config decides)."""
    if args.database is not None:
        return str(args.database)
    env = os.environ.get("APC_DATABASE_URL")
    if env:
        try:
            return database_url(env)
        except argparse.ArgumentTypeError as error:
            raise ConfigError(f"APC_DATABASE_URL: {error}") from None
    return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, required=True, metavar="ORG.toml", help="the org config")
    parser.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help=f"where runs and uploads are kept (default: {default_data_dir()})",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port to bind, 0 for any free one (default: {DEFAULT_PORT})",
    )
    parser.add_argument("--speed", type=_speed, default=1.0, metavar="N", help="run the clock N times faster")
    add_database_argument(parser)
    parser.add_argument(
        "--no-migrate",
        dest="migrate",
        action="store_false",
        help="refuse to start on a schema behind this version instead of migrating it (see apc db upgrade)",
    )
    parser.add_argument(
        "--public-url",
        type=_public_url,
        metavar="URL",
        help="base URL clients reach this server at (file links)",
    )
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text lines, or one JSON object per line for a log collector (default: text)",
    )
    parser.add_argument(
        "--log-level",
        type=str.lower,
        choices=logs.LEVELS,
        default="info",
        help="the least severe records logged (default: info; debug adds one line per tool call)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="H",
        help="a Host name clients may use besides loopback, e.g. agents.example.com ('*': any); repeatable",
    )


def options_from(args: argparse.Namespace) -> ServeOptions:
    return ServeOptions(
        config=args.config,
        data=args.data,
        host=args.host,
        port=args.port,
        speed=args.speed,
        public_url=args.public_url,
        allow_host=list(args.allow_host),
        database=database_from(args),
        migrate=args.migrate,
    )


def run(args: argparse.Namespace) -> int:
    """The `apc serve` entry point: logging to stderr, one asyncio loop, an exit status."""
    logs.configure(args.log_format, args.log_level)
    try:
        options = options_from(args)
    except ConfigError as error:
        log.error("configuration error: %s", error)
        return EXIT_CONFIG
    return asyncio.run(serve(options))


async def serve(
    options: ServeOptions,
    *,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[RunningServer], None] | None = None,
) -> int:
    """Check the configuration, publish, serve until `stop` is set (or a signal arrives), shut down."""
    # Imported here, not at the top, so that every other `apc` command starts without loading the
    # MCP SDK and the web server (more than a second).
    from engine.core import Engine, collect_less
    from engine.http.app import bind_socket, start_server
    from engine.http.auth import OAuthVerifier
    from engine.http.standard_extras import standard_extras

    try:
        org = OrgConfig.load(options.config)
        oauth = None if org.oauth is None else await OAuthVerifier.from_config(org.oauth)
    except ConfigError as error:
        log.error("configuration error: %s", error)
        return EXIT_CONFIG
    try:
        sock = bind_socket(options.host, options.port)
    except OSError as error:
        log.error("cannot listen on %s:%s: %s", options.host, options.port, error.strerror or error)
        return EXIT_FAILED
    port = sock.getsockname()[1]
    public_url = (options.public_url or _local_url(options.host, port)).rstrip("/")
    data_dir = options.data or default_data_dir()
    collect_less()  # this process's work is the engine's writes
    try:
        engine = await Engine.open(
            data_dir,
            org,
            speed=options.speed,
            public_base_url=public_url,
            database=options.database,
            migrate=options.migrate,
        )
    except BaseException as error:
        sock.close()
        if isinstance(error, ConfigError):
            log.error("configuration error: %s", error)
            return EXIT_CONFIG
        if isinstance(error, DataFolderInUse | SchemaError | StoreUnavailable):
            log.error("%s", error)
            return EXIT_FAILED
        if isinstance(error, OSError | sqlite3.Error):
            log.error("cannot open the data folder %s: %s", data_dir, error)
            return EXIT_FAILED
        raise
    try:
        if not await _publish(engine):
            return EXIT_CONFIG
        engine.start_delivery()
        allowed = [*options.allow_host, *_public_host(options.public_url)]
        try:
            server = await start_server(
                engine,
                options.host,
                port,
                allowed,
                oauth=oauth,
                public_url=public_url,
                sock=sock,
                extra_tools=standard_extras(engine),
            )
        except OSError as error:
            log.error("cannot listen on %s:%s: %s", options.host, port, error.strerror or error)
            return EXIT_FAILED
        if engine.evaluator is not None:
            log.info("offering check-1: checks answered by %s", engine.evaluator.model)
        database = options.database or org.server.database
        log.info(
            "serving %s (data: %s%s, clock speed %g, server time %s)",
            server.url,
            data_dir,
            "" if database is None else f", database: {redacted(database)}",
            options.speed,
            rfc3339(engine.clock.now()),
        )
        if options.public_url is None and options.host in ("0.0.0.0", "::"):
            log.warning("file links point at %s; pass --public-url for agents on other hosts", public_url)
        if on_ready is not None:
            on_ready(server)
        try:
            await _serve_until_stopped(engine, stop or asyncio.Event())
        finally:
            await server.stop()
            log.info("stopped")
    finally:
        sock.close()
        await engine.close()
    return EXIT_OK


async def _publish(engine: Engine) -> bool:
    """Publish the config's processes (unchanged ones keep their version); False if any is refused."""
    ok = True
    for entry, result in zip(engine.org.processes, await engine.publish_config_processes(), strict=True):
        if not result.ok:
            ok = False
            log.error("cannot publish %s:", entry.path)
            for issue in result.issues:
                log.error("  %s", issue)
        elif result.created:
            log.info("published %s version %s", result.name, result.version)
        else:
            log.info("%s version %s is current", result.name, result.version)
        for warning in result.warnings:
            log.warning("  %s: warning: %s", result.name, warning)
    return ok


async def _serve_until_stopped(engine: Engine, stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    handled: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
    # Another server on the same database committed a change: apply what is due at once rather than
    # at the next tick (a PostgreSQL store hears of it by LISTEN/NOTIFY; SQLite has no other server).
    woken = asyncio.Event()
    listener = asyncio.create_task(engine.store.listen(lambda _runs: woken.set(), stop))
    try:
        while not stop.is_set():
            woken.clear()  # before the tick: a commit heard while it runs wakes the next one
            started = loop.time()
            try:
                await engine.tick()
            except StoreUnavailable as error:
                log.warning("applying timers: %s", error)
            except Exception:
                log.exception("applying timers failed")
            await _first_of(stop, woken, TICK_SECONDS)
            # Woken soon after this tick began: the commits heard until WAKE_SECONDS after it share the next.
            if woken.is_set() and (pause := started + WAKE_SECONDS - loop.time()) > 0:
                await _first_of(stop, asyncio.Event(), pause)
    finally:
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await listener
        for sig in handled:
            loop.remove_signal_handler(sig)


async def _first_of(stop: asyncio.Event, woken: asyncio.Event, timeout: float) -> None:
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(woken.wait())]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def _local_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def _public_host(public_url: str | None) -> list[str]:
    """The public URL's host name: clients that use it send it as `Host`."""
    if not public_url:
        return []
    parts = urlsplit(public_url)
    return [parts.hostname] if parts.hostname else []
