"""What the console tells the operator, without the storm: one status line plus an activity log.

A notice joins the latest entry of its group when it comes within `GROUP_SECONDS` of it, across
refreshes and whatever else was told between (`5 new work items`, `3 runs ended`, not a line each);
an error that repeats (a server down, read again at every tick) stays one entry with a count and a
hint. Nothing here draws: the app shows `latest` on a screen's status line, which a dialog or the
help covers like any other part of the screen below it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

GROUP_SECONDS = 30.0
HOLD_SECONDS = 8.0
"""How long the answer to an action stays on the status line before live news takes its place."""
KEEP = 500
"""Entries kept in the activity log; older ones go."""
RECENT = 20
"""Entries a notice looks back over for its group: other notices between do not split a group."""

HINTS = {
    "retry": "is the server running? r retries now",
    "forbidden": "check the token or the identity; q quits",
}
DEFAULT_HINT = "r retries now; the log (5) keeps every notice"


@dataclass
class Entry:
    at: datetime
    """When, by the connection's clock (a demo's runs faster): what the activity log shows."""
    text: str
    severity: str = "information"
    group: str | None = None
    """Entries of one group within `GROUP_SECONDS` are one entry: `count` of them."""
    count: int = 1
    hint: str = ""
    first: str = ""
    """The first notice's own words, shown while the group holds only it."""
    moment: float = 0.0
    """When, in real seconds (grouping and holding go by these, not by a demo's fast clock)."""

    @property
    def line(self) -> str:
        if self.group is None:
            text = self.text
        elif self.severity == "error":
            text = self.text if self.count == 1 else f"{self.text} ({self.count} times)"
        else:
            text = self.first if self.count == 1 else f"{self.count} {self.group}"
        return f"{text} · {self.hint}" if self.hint else text


@dataclass
class NoticeLog:
    entries: list[Entry] = field(default_factory=list)
    latest: Entry | None = None
    """What the status line shows: the newest entry, except that live news does not take the place of
    the answer to the operator's own action for `HOLD_SECONDS` (it goes to the log only)."""
    _answered: float | None = None
    """`moment` of the answer on the status line, while it holds it."""

    def add(
        self,
        now: datetime,
        text: str,
        *,
        severity: str = "information",
        group: str | None = None,
        count: int = 1,
        live: bool = False,
        moment: float | None = None,
    ) -> Entry:
        """`live`: news a refresh found, not an answer to the operator. `moment`: real seconds (by
        default `now`'s)."""
        moment = now.timestamp() if moment is None else moment
        same = next(
            (
                e
                for e in reversed(self.entries[-RECENT:])
                if group is not None and e.group == group and moment - e.moment <= GROUP_SECONDS
            ),
            None,
        )
        if same is not None:
            same.count += count
            same.at, same.moment = now, moment
            self.entries.remove(same)
            entry = same
        else:
            entry = Entry(now, text, severity, group, count, first=text, moment=moment)
        self._keep(entry)
        if not live:
            self._answered = moment
        elif self._answered is not None and moment - self._answered < HOLD_SECONDS:
            return entry
        self.latest = entry
        return entry

    def error(
        self, now: datetime, source: str, code: str, message: str, moment: float | None = None
    ) -> Entry:
        """An error as one entry per distinct error: a repeat counts, with a hint of what to do."""
        moment = now.timestamp() if moment is None else moment
        text = f"{source}: {code}: {message}"
        same = next((e for e in reversed(self.entries) if e.severity == "error" and e.group == text), None)
        if same is not None:
            same.count += 1
            same.at, same.moment = now, moment
            self.entries.remove(same)
            entry = same
        else:
            entry = Entry(now, text, "error", group=text, hint=HINTS.get(code, DEFAULT_HINT), moment=moment)
        self._keep(entry)
        self.latest = entry
        return entry

    def _keep(self, entry: Entry) -> None:
        self.entries.append(entry)
        del self.entries[:-KEEP]


Listener = Callable[[str, str], None]
"""A line and its severity (`information`, `warning`, `error`)."""


class ActivityFeed:
    """What the embedded engine does in the background, for the activity log: each notification
    delivery attempt, and the engine's own warnings, which would otherwise be printed over the screen.
    Lines are held until the console listens. The engine may run on a thread of its own: a line told
    there reaches the listener on the console's loop."""

    def __init__(self) -> None:
        self._listener: Listener | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._held: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def listen(self, listener: Listener) -> None:
        with self._lock:
            self._listener = listener
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                self._loop = None
            held, self._held = self._held, []
        for text, severity in held:
            listener(text, severity)

    def emit(self, text: str, severity: str) -> None:
        with self._lock:
            listener, loop = self._listener, self._loop
            if listener is None:
                self._held.append((text, severity))
                return
        if loop is None or _on_loop(loop):
            listener(text, severity)
        else:
            loop.call_soon_threadsafe(listener, text, severity)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class FeedHandler(logging.Handler):
    """The engine's log in embedded mode: into the activity log, never onto the terminal the console
    draws on. Per-attempt delivery lines are left out: `ActivityFeed.on_delivery` tells those."""

    def __init__(self, feed: ActivityFeed) -> None:
        super().__init__(logging.WARNING)
        self.feed = feed

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "engine.outbox" and record.getMessage().startswith("notification "):
            return
        severity = "error" if record.levelno >= logging.ERROR else "warning"
        self.feed.emit(f"{record.name}: {record.getMessage()}", severity)


def route_engine_log(feed: ActivityFeed) -> Callable[[], None]:
    """Send the `engine` loggers to the feed only (not to stderr); returns what undoes it."""
    logger = logging.getLogger("engine")
    handler = FeedHandler(feed)
    before = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False

    def undo() -> None:
        logger.removeHandler(handler)
        logger.propagate = before

    return undo
