"""The `[[notify]]` tables of the org config: where notifications are delivered, and which kinds.

Each table names one HTTPS (or loopback HTTP) endpoint that receives a POST per notification of the
kinds it lists; the URL identifies the target, so two tables may not share one. `secret` signs each
body (HMAC-SHA256), `format = "slack"` sends a Slack incoming-webhook body instead of apc's JSON.
Delivery itself is in `engine.outbox`; this module only reads and checks the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from engine.net import is_loopback

OVERDUE = "overdue"
ESCALATION = "escalation"
NEW_WORK = "new_work"
RUN_ENDED = "run_ended"
KINDS: tuple[str, ...] = (OVERDUE, ESCALATION, NEW_WORK, RUN_ENDED)
"""What the engine notifies: a step went past `due`, a step was escalated, a work item opened for a
person or group, a run ended or was cancelled."""

Format = Literal["json", "slack"]
FORMATS: tuple[str, ...] = ("json", "slack")
NOTIFY_KEYS = frozenset({"url", "kinds", "secret", "format"})
MIN_SECRET_CHARS = 16


class NotifyConfigError(ValueError):
    """A `[[notify]]` table is malformed; the message names the table and the key."""


@dataclass(frozen=True)
class NotifyTarget:
    url: str
    kinds: tuple[str, ...]
    secret: str | None = None
    format: Format = "json"

    def wants(self, kind: str) -> bool:
        return kind in self.kinds


def parse_notify(raw: object) -> tuple[NotifyTarget, ...]:
    """The `[[notify]]` array of tables, checked; an absent array is no targets."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(entry, dict) for entry in raw):
        raise NotifyConfigError("notify: expected an array of tables ([[notify]])")
    targets: list[NotifyTarget] = []
    for i, entry in enumerate(raw):
        target = _target(entry, f"notify[{i}].")
        if any(t.url == target.url for t in targets):
            raise NotifyConfigError(f"notify[{i}].url: {target.url} is already a target")
        targets.append(target)
    return tuple(targets)


def _target(entry: dict[str, Any], where: str) -> NotifyTarget:
    for key in entry:
        if key not in NOTIFY_KEYS:
            raise NotifyConfigError(f"{where}{key}: unknown key (allowed: {', '.join(sorted(NOTIFY_KEYS))})")
    url = entry.get("url")
    if not isinstance(url, str) or not url:
        raise NotifyConfigError(f"{where}url: required, a non-empty string")
    if not _deliverable(url):
        raise NotifyConfigError(f"{where}url: expected an https:// URL (or http:// to this machine)")
    kinds = entry.get("kinds")
    if (
        not isinstance(kinds, list)
        or not kinds
        or not all(isinstance(k, str) for k in kinds)
        or len(set(kinds)) != len(kinds)
    ):
        raise NotifyConfigError(f"{where}kinds: required, a list of distinct kinds among {', '.join(KINDS)}")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise NotifyConfigError(f"{where}kinds: unknown kind '{unknown[0]}' (known: {', '.join(KINDS)})")
    secret = entry.get("secret")
    if secret is not None and (not isinstance(secret, str) or len(secret) < MIN_SECRET_CHARS):
        raise NotifyConfigError(f"{where}secret: expected a string of at least {MIN_SECRET_CHARS} characters")
    shape = entry.get("format", "json")
    if shape not in FORMATS:
        raise NotifyConfigError(f"{where}format: expected one of {', '.join(FORMATS)}")
    return NotifyTarget(url, tuple(kinds), secret, "slack" if shape == "slack" else "json")


def _deliverable(url: str) -> bool:
    """https anywhere; plain http only to this machine, so a signature or a payload never crosses a
    network in clear text."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if not host:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host))
