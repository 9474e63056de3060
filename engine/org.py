"""The organization: groups, people, agents, operators and their credentials, from one TOML file.

Spec §3.4 maps roles to groups at publication and §4.1 says who may call what; everything that needs
to know who belongs where asks this object. Tokens are compared as SHA-256 digests with
`hmac.compare_digest` over every credential, so a lookup's timing does not reveal which one matched.

The same file carries `[check]` (the evaluator, check profile §5), parsed by `engine.evaluator.config`,
and `[oauth]` (the identity provider), parsed here; `engine.http.auth.oauth` only verifies tokens against
it. `OrgConfig.load` is the one loader for the file, so the console, `apc serve` and the tests read it
the same way. This module imports nothing above the check configuration, the identity and `net`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from engine.evaluator.base import CheckConfigError
from engine.evaluator.config import CheckConfig, parse_check_config
from engine.identity import Identity
from engine.net import is_loopback
from engine.notify import NotifyConfigError, NotifyTarget, parse_notify

OPERATORS_GROUP = "operators"
"""The reserved group escalations are assigned to (spec §3.3): every person with `operator = true`."""

DEFAULT_LEASE_SECONDS = 600
DEFAULT_RUN_DATA_BYTES = 1_048_576
DEFAULT_MAX_UPLOAD_BYTES = 10_485_760
DEFAULT_POOL_SIZE = 10
DEFAULT_DATABASE_TIMEOUT_SECONDS = 30

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ConfigError(ValueError):
    """The org config is malformed; the message names the key."""


def is_email(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 254 and _EMAIL.fullmatch(value) is not None


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


TOKEN_PREFIX = "apc_"
TOKEN_BYTES = 32


def new_token() -> str:
    """256 random bits, URL-safe, with a prefix that makes a leaked token easy to recognise."""
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


@dataclass(frozen=True)
class ServerSettings:
    lease_seconds: int = DEFAULT_LEASE_SECONDS
    run_data_bytes: int = DEFAULT_RUN_DATA_BYTES
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    secrets_file: Path | None = None
    """The server's secrets file (`engine.keys`); None: `secrets.key` in the data folder."""
    database: str | None = None
    """A `postgresql://` URL: the state lives there, shared by every server on it; None: SQLite in the
    data folder."""
    files: Path | None = None
    """Where uploads are kept; servers sharing a database share this folder. None: `files/` in the data folder."""
    database_pool_size: int = DEFAULT_POOL_SIZE
    """At most this many connections per server to a PostgreSQL database."""
    database_timeout_seconds: int = DEFAULT_DATABASE_TIMEOUT_SECONDS
    """A PostgreSQL statement running longer is cancelled (the call answers `retry`)."""


@dataclass(frozen=True)
class Person:
    email: str
    token_sha256: str | None = None
    operator: bool = False


@dataclass(frozen=True)
class Agent:
    id: str
    token_sha256: str | None = None


@dataclass(frozen=True)
class ProcessEntry:
    """A process the config publishes at start: a folder or PROCESS.md and its role bindings."""

    path: Path
    bind: dict[str, str] = field(default_factory=dict)


OAUTH_KEYS = frozenset({"issuer", "audience", "jwks_file", "jwks_url", "agent_claim"})


@dataclass(frozen=True)
class OAuthConfig:
    issuer: str
    audience: str
    jwks_file: Path | None = None
    jwks_url: str | None = None
    agent_claim: str | None = None


@dataclass
class OrgConfig:
    server: ServerSettings = field(default_factory=ServerSettings)
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    people: dict[str, Person] = field(default_factory=dict)
    agents: dict[str, Agent] = field(default_factory=dict)
    processes: list[ProcessEntry] = field(default_factory=list)
    check: CheckConfig = field(default_factory=CheckConfig)
    """The `[check]` table: which evaluator answers checks (none: `check-1` is not offered) and limits."""
    oauth: OAuthConfig | None = None
    """The `[oauth]` table, or None when bearer tokens from this file are the only credentials."""
    notify: tuple[NotifyTarget, ...] = ()
    """The `[[notify]]` tables: where notifications of which kinds are delivered."""

    @classmethod
    def build(
        cls,
        *,
        groups: dict[str, list[str]] | None = None,
        people: dict[str, str | None] | None = None,
        operators: dict[str, str | None] | None = None,
        agents: dict[str, str | None] | None = None,
        server: ServerSettings | None = None,
        check: CheckConfig | None = None,
        notify: tuple[NotifyTarget, ...] = (),
    ) -> OrgConfig:
        """An org in code (tests, embedded console): people/operators/agents map an id to a plain token."""
        people_map: dict[str, Person] = {}
        for email, token in (people or {}).items():
            people_map[email] = Person(email, token_digest(token) if token else None, False)
        for email, token in (operators or {}).items():
            people_map[email] = Person(email, token_digest(token) if token else None, True)
        agent_map = {aid: Agent(aid, token_digest(t) if t else None) for aid, t in (agents or {}).items()}
        org = cls(
            server=server or ServerSettings(),
            groups={gid: tuple(members) for gid, members in (groups or {}).items()},
            people=people_map,
            agents=agent_map,
            check=check or CheckConfig(),
            notify=notify,
        )
        org.validate()
        return org

    @classmethod
    def load(cls, path: Path) -> OrgConfig:
        """The org config file; a ConfigError names the file, the key and, when it can, the line."""
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
        try:
            return cls.from_mapping(raw, base=path.parent)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {_with_line(str(exc), text)}") from None

    @classmethod
    def from_mapping(cls, raw: dict[str, Any], *, base: Path) -> OrgConfig:
        """The parsed TOML; relative paths (processes, scripted answers, key files) are under `base`."""
        _keys(raw, "", {"server", "groups", "people", "agents", "processes", "check", "oauth", "notify"})
        server_raw = _table(raw, "server")
        _keys(
            server_raw,
            "server.",
            {
                "lease_seconds",
                "run_data_bytes",
                "max_upload_bytes",
                "secrets_file",
                "database",
                "files",
                "database_pool_size",
                "database_timeout_seconds",
            },
        )
        secrets_file = _optional_path(server_raw, "secrets_file", base)
        files = _optional_path(server_raw, "files", base)
        database = server_raw.get("database")
        if database is not None and (
            not isinstance(database, str) or not database.startswith(("postgresql://", "postgres://"))
        ):
            raise ConfigError("server.database: expected a postgresql:// URL")
        server = ServerSettings(
            lease_seconds=_positive_int(server_raw, "server.", "lease_seconds", DEFAULT_LEASE_SECONDS),
            run_data_bytes=_positive_int(server_raw, "server.", "run_data_bytes", DEFAULT_RUN_DATA_BYTES),
            max_upload_bytes=_positive_int(
                server_raw, "server.", "max_upload_bytes", DEFAULT_MAX_UPLOAD_BYTES
            ),
            secrets_file=secrets_file,
            database=database,
            files=files,
            database_pool_size=_positive_int(server_raw, "server.", "database_pool_size", DEFAULT_POOL_SIZE),
            database_timeout_seconds=_positive_int(
                server_raw, "server.", "database_timeout_seconds", DEFAULT_DATABASE_TIMEOUT_SECONDS
            ),
        )
        groups: dict[str, tuple[str, ...]] = {}
        for i, entry in enumerate(_array(raw, "groups")):
            where = f"groups[{i}]."
            _keys(entry, where, {"id", "members"})
            gid = _required_str(entry, where, "id")
            members = entry.get("members", [])
            if not isinstance(members, list) or not all(is_email(m) for m in members):
                raise ConfigError(f"{where}members: expected a list of email addresses")
            if gid in groups:
                raise ConfigError(f"{where}id: duplicate group '{gid}'")
            groups[gid] = tuple(members)
        people: dict[str, Person] = {}
        for i, entry in enumerate(_array(raw, "people")):
            where = f"people[{i}]."
            _keys(entry, where, {"email", "token", "token_sha256", "operator"})
            email = _required_str(entry, where, "email")
            if not is_email(email):
                raise ConfigError(f"{where}email: not an email address")
            operator = entry.get("operator", False)
            if not isinstance(operator, bool):
                raise ConfigError(f"{where}operator: expected true or false")
            if email in people:
                raise ConfigError(f"{where}email: duplicate person '{email}'")
            people[email] = Person(email, _credential(entry, where), operator)
        agents: dict[str, Agent] = {}
        for i, entry in enumerate(_array(raw, "agents")):
            where = f"agents[{i}]."
            _keys(entry, where, {"id", "token", "token_sha256"})
            aid = _required_str(entry, where, "id")
            if aid in agents:
                raise ConfigError(f"{where}id: duplicate agent '{aid}'")
            agents[aid] = Agent(aid, _credential(entry, where))
        processes: list[ProcessEntry] = []
        for i, entry in enumerate(_array(raw, "processes")):
            where = f"processes[{i}]."
            _keys(entry, where, {"path", "bind"})
            rel = _required_str(entry, where, "path")
            bind = entry.get("bind", {})
            if not isinstance(bind, dict) or not all(isinstance(v, str) for v in bind.values()):
                raise ConfigError(f"{where}bind: expected a table of role = group id")
            processes.append(ProcessEntry((base / rel).resolve(), dict(bind)))
        org = cls(
            server=server,
            groups=groups,
            people=people,
            agents=agents,
            processes=processes,
            check=_check(raw, base),
            oauth=_oauth(raw, base),
            notify=_notify(raw),
        )
        org.validate()
        return org

    def validate(self) -> None:
        """Cross-entry rules: ids well formed, no identity both agent and person, no reserved group."""
        for gid in self.groups:
            if not _ID.fullmatch(gid):
                raise ConfigError(f"groups.{gid}: id must be letters, digits, '_', '.' or '-'")
            if gid == OPERATORS_GROUP:
                raise ConfigError(f"groups.{gid}: '{OPERATORS_GROUP}' is reserved for the operators")
        for aid in self.agents:
            if not _ID.fullmatch(aid):
                raise ConfigError(f"agents.{aid}: id must be letters, digits, '_', '.' or '-'")
        credentials: list[Person | Agent] = [*self.people.values(), *self.agents.values()]
        digests = [c.token_sha256 for c in credentials if c.token_sha256]
        if len(digests) != len(set(digests)):
            raise ConfigError("tokens: two identities share one token")

    # --- queries -----------------------------------------------------------------------------------

    def identity_for_token(self, token: str) -> Identity | None:
        """The identity a bearer token belongs to; every credential is compared so timing leaks nothing."""
        digest = token_digest(token).encode()
        found: Identity | None = None
        for person in self.people.values():
            if person.token_sha256 and hmac.compare_digest(person.token_sha256.encode(), digest):
                found = Identity("person", person.email, person.operator)
        for agent in self.agents.values():
            if agent.token_sha256 and hmac.compare_digest(agent.token_sha256.encode(), digest):
                found = Identity("agent", agent.id)
        return found

    def identity_for_person(self, email: str) -> Identity | None:
        person = self.people.get(email)
        return None if person is None else Identity("person", email, person.operator)

    def groups_of(self, identity: Identity) -> list[str]:
        """The groups whose work items this identity sees, operators' queue included."""
        if not identity.is_person:
            return []
        found = [gid for gid, members in self.groups.items() if identity.id in members]
        if self.is_operator(identity):
            found.append(OPERATORS_GROUP)
        return found

    def is_operator(self, identity: Identity) -> bool:
        if not identity.is_person:
            return False
        person = self.people.get(identity.id)
        return identity.operator or (person is not None and person.operator)

    def notify_urls(self, kind: str) -> list[str]:
        """The targets that want notifications of `kind`, by URL."""
        return [target.url for target in self.notify if target.wants(kind)]

    def operators(self) -> list[str]:
        return sorted(p.email for p in self.people.values() if p.operator)

    def knows_person(self, email: str) -> bool:
        """A person value resolves when the org lists that person or any group names them."""
        return email in self.people or any(email in members for members in self.groups.values())

    def group_members(self, group: str) -> list[str]:
        if group == OPERATORS_GROUP:
            return self.operators()
        return list(self.groups.get(group, ()))


def _check(raw: dict[str, Any], base: Path) -> CheckConfig:
    table = raw.get("check")
    if table is not None and not isinstance(table, dict):
        raise ConfigError("check: expected a table ([check])")
    try:
        # `answers` is relative to the config file's folder; the parser takes the file and uses its folder.
        return parse_check_config(table, base / "org.toml")
    except CheckConfigError as exc:
        raise ConfigError(str(exc)) from None


def _notify(raw: dict[str, Any]) -> tuple[NotifyTarget, ...]:
    try:
        return parse_notify(raw.get("notify"))
    except NotifyConfigError as exc:
        raise ConfigError(str(exc)) from None


def _oauth(raw: dict[str, Any], base: Path) -> OAuthConfig | None:
    return None if "oauth" not in raw else parse_oauth(raw["oauth"], base=base)


def parse_oauth(raw: object, *, base: Path) -> OAuthConfig:
    """Check the `[oauth]` table; a relative `jwks_file` is relative to the config file's folder."""
    if not isinstance(raw, dict):
        raise ConfigError("oauth: expected a table ([oauth])")
    for key in raw:
        if key not in OAUTH_KEYS:
            raise ConfigError(f"oauth.{key}: unknown key (allowed: {', '.join(sorted(OAUTH_KEYS))})")
    values: dict[str, str] = {}
    for key in ("issuer", "audience", "jwks_file", "jwks_url", "agent_claim"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"oauth.{key}: expected a non-empty string")
        values[key] = value.strip()
    for key in ("issuer", "audience"):
        if key not in values:
            raise ConfigError(f"oauth.{key}: required, a non-empty string")
    if ("jwks_file" in values) == ("jwks_url" in values):
        raise ConfigError("oauth.jwks_file: give exactly one of jwks_file and jwks_url")
    if not _secure_url(values["issuer"]):
        raise ConfigError("oauth.issuer: expected an https:// URL")
    url = values.get("jwks_url")
    if url is not None and not _secure_url(url):
        raise ConfigError("oauth.jwks_url: expected an https:// URL")
    jwks_file = values.get("jwks_file")
    return OAuthConfig(
        issuer=values["issuer"],
        audience=values["audience"],
        jwks_file=None if jwks_file is None else (base / jwks_file).resolve(),
        jwks_url=url,
        agent_claim=values.get("agent_claim"),
    )


def _secure_url(url: str) -> bool:
    """https, or http to this machine (an identity provider run locally for development)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if not host:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host))


_LINED_TABLES = ("check", "oauth")
"""Tables whose messages point at the line: their keys are the ones an operator edits by hand."""


def _with_line(message: str, text: str) -> str:
    """Add the line of a `[check]` or `[oauth]` key the message names, when the file spells it out."""
    key_path = message.split(":", 1)[0]
    table, _, key = key_path.partition(".")
    if table not in _LINED_TABLES or not key.isidentifier():
        return message
    in_table = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_table = stripped.replace(" ", "") == f"[{table}]"
        elif in_table and stripped.split("=", 1)[0].strip() == key:
            return f"line {number}: {message}"
    return message


def _keys(table: dict[str, Any], where: str, allowed: set[str]) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(f"{where}{key}: unknown key (allowed: {', '.join(sorted(allowed))})")


def _table(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a table")
    return value


def _array(raw: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{key}: expected an array of tables ([[{key}]])")
    return value


def _required_str(table: dict[str, Any], where: str, key: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}{key}: required, a non-empty string")
    return value


def _optional_path(table: dict[str, Any], key: str, base: Path) -> Path | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"server.{key}: expected a path (relative to this file's folder)")
    return (base / value).resolve()


def _positive_int(table: dict[str, Any], where: str, key: str, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}{key}: expected a positive integer")
    return value


def _credential(entry: dict[str, Any], where: str) -> str | None:
    token, digest = entry.get("token"), entry.get("token_sha256")
    if token is not None and digest is not None:
        raise ConfigError(f"{where}token: give token or token_sha256, not both")
    if token is not None:
        if not isinstance(token, str) or len(token) < 8:
            raise ConfigError(f"{where}token: expected a string of at least 8 characters")
        return token_digest(token)
    if digest is not None:
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest.lower()):
            raise ConfigError(f"{where}token_sha256: expected 64 hex digits")
        return digest.lower()
    return None
