"""`conform.toml`: what the runner cannot create over the protocol, named by the server's operator.

The protocol has no tool for making identities or publishing processes, so the operator of the server
under test provides them: an operator, two people in one group, a person in no group, two agents, and
the runner's own processes published with every role bound to that group (`apc conform --print-setup`
writes a ready example). The file also declares how fast the server's clock runs, so the runner knows
how long a `wait: 1m` or a lease takes in real time.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

IdentityKind = Literal["agent", "person"]

PEOPLE = ("operator", "person1", "person2", "outsider")
AGENTS = ("agent1", "agent2")
ROLES: dict[str, str] = {
    "operator": "a person with operator rights (cancels runs, receives escalations), not in the group",
    "person1": "a member of the group",
    "person2": "another member of the same group",
    "outsider": "a person in no group",
    "agent1": "an agent",
    "agent2": "another agent",
}
"""Every identity the runner needs, and what it must be on the server."""


class ConfigError(ValueError):
    """The conform config is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class Actor:
    """One identity the runner calls as: a bearer token, and the value the server records for it."""

    name: str
    """The config key: `agent1`, `person2`, ..."""
    kind: IdentityKind
    token: str = field(repr=False)
    value: str | None
    """The person value (`mira@example.com`) or agent id the server writes in `by` and `startedBy`.
    None for an agent whose id the config leaves out: the runner learns it from the first run."""


@dataclass(frozen=True)
class ConformConfig:
    servers: tuple[str, ...]
    """MCP endpoints of the server under test; several are used round-robin (one database)."""
    speed: float
    """How many times faster than real time the server's clock runs."""
    group: str
    """The group every role of the runner's processes is bound to."""
    actors: dict[str, Actor]

    def actor(self, name: str) -> Actor:
        return self.actors[name]


def load(path: Path) -> ConformConfig:
    """Read and check a conform.toml; every problem is a ConfigError naming the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    try:
        return parse(raw)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def parse(raw: dict[str, Any], env: dict[str, str] | None = None) -> ConformConfig:
    """The parsed TOML; `env` (default: the process environment) supplies `token_env` values."""
    environ = dict(os.environ) if env is None else env
    _keys(raw, "", {"server", "group", "identities"})
    server = _table(raw, "server")
    _keys(server, "server.", {"url", "urls", "speed"})
    urls: list[str] = []
    if "url" in server:
        urls.append(_string(server, "server.", "url"))
    if "urls" in server:
        listed = server["urls"]
        if not isinstance(listed, list) or not all(isinstance(u, str) and u for u in listed):
            raise ConfigError("server.urls: expected a list of URLs")
        urls.extend(listed)
    for url in urls:
        _url(url, "server.url")
    speed = server.get("speed", 1)
    if isinstance(speed, bool) or not isinstance(speed, int | float) or not 0 < speed < float("inf"):
        raise ConfigError("server.speed: expected a positive number (1 = real time)")
    group_table = _table(raw, "group")
    _keys(group_table, "group.", {"id"})
    group = _string(group_table, "group.", "id")
    identities = _table(raw, "identities")
    _keys(identities, "identities.", set(ROLES))
    actors: dict[str, Actor] = {}
    for name in ROLES:
        where = f"identities.{name}."
        if name not in identities:
            raise ConfigError(f"identities.{name}: required ({ROLES[name]})")
        entry = identities[name]
        if not isinstance(entry, dict):
            raise ConfigError(f"identities.{name}: expected a table")
        kind: IdentityKind = "agent" if name in AGENTS else "person"
        allowed = {"token", "token_env", "id" if kind == "agent" else "person"}
        _keys(entry, where, allowed)
        token = _token(entry, where, environ)
        if kind == "person":
            value: str | None = _string(entry, where, "person")
        else:
            value = _string(entry, where, "id") if "id" in entry else None
        actors[name] = Actor(name, kind, token, value)
    tokens = [a.token for a in actors.values()]
    if len(set(tokens)) != len(tokens):
        raise ConfigError("identities: every identity needs its own token")
    people = [a.value for a in actors.values() if a.kind == "person"]
    if len(set(people)) != len(people):
        raise ConfigError("identities: every person needs their own person value")
    return ConformConfig(tuple(urls), float(speed), group, actors)


def _url(value: str, where: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: expected an http(s) URL of the MCP endpoint, got {value!r}")
    return value


def check_url(value: str) -> str:
    """A `--server` value: the same rule as `server.url`."""
    return _url(value, "--server")


def _token(entry: dict[str, Any], where: str, environ: dict[str, str]) -> str:
    if ("token" in entry) == ("token_env" in entry):
        raise ConfigError(f"{where}token: give token or token_env (an environment variable), one of them")
    if "token" in entry:
        return _string(entry, where, "token")
    variable = _string(entry, where, "token_env")
    value = environ.get(variable)
    if not value:
        raise ConfigError(f"{where}token_env: environment variable {variable} is not set")
    return value


def _keys(table: dict[str, Any], where: str, allowed: set[str]) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(f"{where}{key}: unknown key (allowed: {', '.join(sorted(allowed))})")


def _table(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a table ([{key}])")
    return value


def _string(table: dict[str, Any], where: str, key: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}{key}: required, a non-empty string")
    return value
