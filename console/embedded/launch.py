"""`apc` with no server: the engine in-process in the user data folder, and its MCP endpoint beside it.

First start writes an org config (one group per sample role, a local operator in every group, one
agent) with fresh tokens to `org.toml` in the data folder, readable only by the user. The sample
processes are published by the first start that finds them with nothing published yet; an
`org.toml` without groups (written by a start that found no samples) is repaired then too. Every
start serves the endpoint on 127.0.0.1 from port 8765 up (or the port asked for; 0 for any free
one) and shows its URL, the agent token and a client config to paste.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from console.client.engine_thread import EngineThread
from console.client.local import LocalClient
from console.embedded.samples import SAMPLES, no_samples, publish_samples, sample_folders
from console.live.notices import ActivityFeed, route_engine_log
from console.live.session import EndpointInfo, OpenFailed, Session
from engine.core import DB_FILE, Engine
from engine.datafolder import FILE_MODE, DataFolderInUse, default_data_dir, prepare
from engine.document import load_path
from engine.http.app import RunningServer, bind_socket, start_server
from engine.http.standard_extras import standard_extras
from engine.identity import Identity
from engine.org import ConfigError, OrgConfig, new_token
from engine.store.base import AttemptResult, Delivery, StoreUnavailable
from engine.store.migrations import SchemaError

__all__ = [
    "NoDataFolder",
    "default_data_dir",
    "ensure_org",
    "open_embedded",
    "open_read_only",
    "org_toml",
    "sample_roles",
]

ORG_FILE = "org.toml"
OPERATOR_EMAIL = "operator@apc.local"
AGENT_ID = "local-agent"
HOST = "127.0.0.1"
FIRST_PORT = 8765


def sample_roles(folder: Path) -> list[str]:
    """Every role the sample processes name, each once, in folder order."""
    roles: dict[str, None] = {}
    for path in sample_folders(folder):
        loaded = load_path(path)
        for role in loaded.process.roles if loaded.process is not None else ():
            roles.setdefault(role)
    return list(roles)


def groups_toml(roles: list[str]) -> list[str]:
    lines: list[str] = []
    for role in roles:
        lines += ["[[groups]]", f"id = {json.dumps(role)}", f"members = [{json.dumps(OPERATOR_EMAIL)}]", ""]
    return lines


def org_toml(roles: list[str], operator_token: str, agent_token: str) -> str:
    """The generated org config; strings are written as JSON strings, which TOML reads the same."""
    lines: list[str] = ["# Written by apc on first start: the local console's organization.", ""]
    lines += groups_toml(roles)
    lines += [
        "[[people]]",
        f"email = {json.dumps(OPERATOR_EMAIL)}",
        f"token = {json.dumps(operator_token)}",
        "operator = true",
        "",
    ]
    lines += ["[[agents]]", f"id = {json.dumps(AGENT_ID)}", f"token = {json.dumps(agent_token)}", ""]
    return "\n".join(lines)


def agent_token(path: Path) -> str:
    """The local agent's token as written in the org file (the org itself keeps only digests)."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    return str(next(a["token"] for a in raw.get("agents", []) if a.get("id") == AGENT_ID))


def ensure_org(data_dir: Path, samples: Path = SAMPLES) -> tuple[OrgConfig, bool]:
    """The org from `org.toml`, written first (owner-only) when missing, or given a group per sample
    role when it has none (a start that found no samples wrote it so); True when it was written or
    repaired."""
    path = data_dir / ORG_FILE
    prepare(data_dir)
    if not path.exists():
        _write_private(path, org_toml(sample_roles(samples), new_token(), new_token()))
        return OrgConfig.load(path), True
    text = path.read_text(encoding="utf-8")
    if tomllib.loads(text).get("groups"):
        return OrgConfig.load(path), False
    roles = sample_roles(samples)
    if not roles:
        return OrgConfig.load(path), False
    added = ["# Groups added by apc: the first start found no sample processes.", "", *groups_toml(roles)]
    _write_private(path, text.rstrip("\n") + "\n\n" + "\n".join(added))
    return OrgConfig.load(path), True


def _write_private(path: Path, text: str) -> None:
    """Write `text` owner-only, all or nothing: a crash leaves the old file or the new one."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".org-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def delivery_line(delivery: Delivery, result: AttemptResult) -> tuple[str, str]:
    """One notification delivery attempt as a line of the activity log, and its severity."""
    what = f"notification {delivery.notification.kind} to {delivery.target}"
    if result.state == "delivered":
        return f"{what}: delivered", "information"
    if result.state == "pending":
        return f"{what}: attempt {delivery.attempts} failed ({result.error}); retried later", "warning"
    return f"{what}: given up after {delivery.attempts} attempts ({result.error})", "error"


@contextmanager
def told_plainly() -> Iterator[None]:
    """An error opening the data folder that its user can act on (not ours or at another schema, a
    mistake in org.toml, a store that is down, a folder in use, a port taken) as OpenFailed, one
    line; anything else keeps its traceback (a bug)."""
    try:
        yield
    except (SchemaError, ConfigError, StoreUnavailable, DataFolderInUse, OSError) as error:
        raise OpenFailed(str(error)) from error


async def open_embedded(data_dir: Path, samples: Path = SAMPLES, port: int | None = None) -> Session:
    """Open the engine, publish the samples on first start, start the endpoint: a ready session.

    The engine, its endpoint and its timers run on a thread of their own (EngineThread); the console's
    client hands every call over to it. `port` None takes the first free port from 8765; 0 any free
    port; another number exactly that one.
    """
    with told_plainly():
        org, _ = ensure_org(data_dir, samples)
    thread = EngineThread()
    try:
        with told_plainly():
            engine, server, notices, activity, restore_log = await thread.run(
                _serve(data_dir, org, samples, port)
            )
    except BaseException:
        await thread.stop()
        raise

    ui = asyncio.get_running_loop()
    watching: list[asyncio.Event] = []

    async def listen(on_change: Callable[[], None]) -> None:
        """On the engine's loop: wake the console (on its own loop) for every change another server
        commits to a shared database (a SQLite store has none to tell)."""
        closing = asyncio.Event()
        watching.append(closing)

        def changed(_runs: list[str]) -> None:
            ui.call_soon_threadsafe(on_change)

        await engine.store.listen(changed, closing)

    async def watch(on_change: Callable[[], None]) -> None:
        await thread.run(listen(on_change))

    async def close() -> None:
        try:
            await thread.run(_stop(engine, server, watching, restore_log))
        finally:
            await thread.stop()

    operator = Identity("person", OPERATOR_EMAIL, operator=True)
    endpoint = EndpointInfo(server.url, AGENT_ID, agent_token(data_dir / ORG_FILE), data_dir)
    return Session(
        LocalClient(engine, operator, hop=thread.run),
        f"embedded · {data_dir}",
        clock=engine.clock,
        endpoint=endpoint,
        close=close,
        notices=notices,
        watch=watch,
        activity=activity,
    )


async def _serve(
    data_dir: Path, org: OrgConfig, samples: Path, port: int | None
) -> tuple[Engine, RunningServer, list[str], ActivityFeed, Callable[[], None]]:
    """On the engine's loop: open the engine, publish the samples on first start, serve the endpoint;
    its background work and its log go to the activity feed (`restore_log` undoes the latter)."""
    sock = bind_socket(HOST, port, first=FIRST_PORT)
    bound = sock.getsockname()[1]
    try:
        engine = await Engine.open(data_dir, org, public_base_url=f"http://{HOST}:{bound}")
    except BaseException:
        sock.close()
        raise
    activity = ActivityFeed()
    engine.start_delivery(on_result=lambda d, r: activity.emit(*delivery_line(d, r)))
    restore_log = route_engine_log(activity)
    notices: list[str] = []
    try:
        if not await engine.store.list_latest_versions(None, 1):
            if sample_folders(samples):
                published, refused = await publish_samples(engine, samples)
                notices.append(f"Published {len(published)} sample processes.")
                notices += [f"Not published: {name}: {'; '.join(issues)}" for name, issues in refused.items()]
            else:
                notices.append(no_samples(samples))
        server = await start_server(engine, HOST, sock=sock, extra_tools=standard_extras(engine))
    except BaseException:
        sock.close()
        await engine.close()
        restore_log()
        raise
    notices.insert(
        0, f"MCP endpoint {server.url}: the agent token and a client config are in the Endpoint tab (4)."
    )
    return engine, server, notices, activity, restore_log


async def _stop(
    engine: Engine, server: RunningServer, watching: list[asyncio.Event], restore_log: Callable[[], None]
) -> None:
    for closing in watching:
        closing.set()
    try:
        await server.stop()
    finally:
        await engine.close()
        restore_log()


class NoDataFolder(Exception):
    """`--read-only` on a folder that holds no organization: said in one line, never created."""


def check_read_only_folder(data_dir: Path) -> None:
    """NoDataFolder unless `data_dir` holds an organization and its database (a read-only start makes
    neither)."""
    if not data_dir.is_dir():
        raise NoDataFolder(
            f"no data folder at {data_dir}; --read-only opens an existing one and creates nothing"
        )
    for name in (ORG_FILE, DB_FILE):
        if not (data_dir / name).is_file():
            raise NoDataFolder(f"{data_dir} holds no {name}; --read-only opens an existing data folder only")


async def open_read_only(data_dir: Path) -> Session:
    """The data folder as it is, read-only: no org file written or repaired, nothing published, no
    endpoint (so no token shown), no lock or secrets file written; SQLite opens it `mode=ro`."""
    check_read_only_folder(data_dir)
    with told_plainly():
        org = OrgConfig.load(data_dir / ORG_FILE)
        engine = await Engine.open_read_only(data_dir, org)
    operator = Identity("person", OPERATOR_EMAIL, operator=True)
    return Session(
        LocalClient(engine, operator, admin=False),
        f"embedded · read-only · {data_dir}",
        clock=engine.clock,
        endpoint=None,
        close=engine.close,
        notices=["Read-only: nothing is written to the data folder; what is due is shown, not applied."],
    )
