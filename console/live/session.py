"""A connection ready to use, and what the console shows about it: built by whoever opens the
console (`apc`, the embedded launcher, the demo) and handed to the app."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from textual.widget import Widget

from console.client import Client, Clock
from console.live.notices import ActivityFeed
from console.live.presenter import Presenter


class OpenFailed(Exception):
    """The console's connection could not be opened for a reason its user can act on (a data folder
    that is not ours, a database at another schema, an org file with a mistake, a store that is down):
    the message says it in one line, and `apc` exits with it instead of a traceback."""


@dataclass(frozen=True)
class EndpointInfo:
    """The MCP endpoint the embedded console serves, and an agent credential for it."""

    url: str
    agent_id: str
    token: str
    data_dir: Path | None = None

    def client_config(self) -> str:
        """A ready-to-paste MCP client configuration (Streamable HTTP with a bearer token)."""
        server = {"type": "http", "url": self.url, "headers": {"Authorization": f"Bearer {self.token}"}}
        return json.dumps({"mcpServers": {"apc": server}}, indent=2)


@dataclass(frozen=True)
class ExtraPane:
    """A tab another part of the product adds (the demo's agent activity, for one)."""

    id: str
    title: str
    build: Callable[[], Widget]


@dataclass
class Session:
    """A connection ready to use, and what the console shows about it."""

    client: Client
    where: str
    """`embedded · <data dir>` or `remote · <url>`, for the status line."""
    clock: Clock | None = None
    endpoint: EndpointInfo | None = None
    close: Callable[[], Awaitable[None]] | None = None
    notices: list[str] = field(default_factory=list)
    """Shown as toasts once the console is up (what start-up published or refused)."""
    presenter: Presenter | None = None
    """The controls of a live demo, when the console shows one."""
    activity: ActivityFeed | None = None
    """The embedded engine's background work (deliveries, its log), for the activity log."""
    watch: Callable[[Callable[[], None]], Awaitable[None]] | None = None
    """Call back on every change another server commits to the same database, until the session
    closes (an embedded engine on PostgreSQL): the console reads again at once."""


Opener = Callable[[], Awaitable[Session]]
