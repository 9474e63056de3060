"""The server's secrets: one small file outside the database, so a copy of `engine.db` alone signs and
opens nothing.

The file holds three independent 256-bit keys: `file_url` signs evidence links (`/files/...`),
`cursor` signs the paging cursors the server hands out, and `replay` encrypts the recorded results of
`claim` and `renew`, which carry live lease tokens. A fourth key is derived from `replay` (HMAC with
the label `LEASE_LABEL`) rather than stored, so secrets files written before it still hold all there
is: `lease` signs the lease tokens themselves, which name the run and step they were issued for
(`tools.leases`). By default the file is `secrets.key` in the data folder; `[server] secrets_file`
names another path, which several servers on one database share (each must verify the tokens another
one issued).

It is created on first start, owner-only (0600), written whole before it appears (a second server
starting at the same moment reads the first one's file, never half of it). Losing it costs little but
is visible: file links already handed out stop working, cursors already handed out are refused as
`invalid` (the caller starts from the first page), replays of earlier claims and renews answer
`conflict`, since their recorded tokens can no longer be read back, and live lease tokens answer
`invalid`: their steps stay claimed until the leases end, then any agent claims them again.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import stat
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

SECRETS_FILE = "secrets.key"
KEY_BYTES = 32
KEY_NAMES = ("file_url", "cursor", "replay")
LEASE_LABEL = b"apc lease tokens"

log = logging.getLogger("engine.keys")

HEADER = """\
# apc server secrets: keep this file private (mode 0600) and never commit it.
# file_url signs evidence links, cursor signs paging cursors, replay encrypts the recorded
# results of claim and renew and signs lease tokens. Lost: old file links and cursors stop
# working, replays of earlier claims answer conflict, and live lease tokens are refused until
# their leases end. Several servers on one database share one copy.
"""


class SecretsError(ValueError):
    """The secrets file cannot be read or is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class ServerKeys:
    file_url: bytes
    cursor: bytes
    replay: bytes

    @classmethod
    def generate(cls, *, file_url: bytes | None = None) -> ServerKeys:
        """Fresh random keys; `file_url` adopts an existing link-signing key instead of a new one."""
        return cls(
            file_url=file_url or secrets.token_bytes(KEY_BYTES),
            cursor=secrets.token_bytes(KEY_BYTES),
            replay=secrets.token_bytes(KEY_BYTES),
        )

    @property
    def lease(self) -> bytes:
        """The key that signs lease tokens: derived from `replay`, which already guards lease tokens."""
        return hmac.new(self.replay, LEASE_LABEL, hashlib.sha256).digest()

    def text(self) -> str:
        lines = [f'{name} = "{getattr(self, name).hex()}"' for name in KEY_NAMES]
        return HEADER + "\n".join(lines) + "\n"


def load_keys(path: Path, *, adopt_file_url: bytes | None = None) -> tuple[ServerKeys, bool]:
    """The keys in `path`, creating the file with fresh ones when it does not exist; True if created.

    `adopt_file_url` is used only when the file is created (see `engine.core`, which moves an older
    data folder's link-signing key here).
    """
    if not path.exists():
        created = _create(path, ServerKeys.generate(file_url=adopt_file_url))
        if created:
            log.info("created the secrets file %s", path)
    else:
        created = False
    return _read(path), created


def _create(path: Path, keys: ServerKeys) -> bool:
    """Write the file under a temporary name, fsync, then link it into place unless one appeared."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secrets-")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(keys.text())
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        _fsync_dir(path.parent)
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)


def _read(path: Path) -> ServerKeys:
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SecretsError(f"{path}: cannot read the secrets file ({exc.strerror})") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("the secrets file %s is open to other users (mode %o); chmod 600 it", path, mode & 0o777)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SecretsError(f"{path}: not a secrets file ({exc})") from None
    for name in raw:
        if name not in KEY_NAMES:
            raise SecretsError(f"{path}: {name}: unknown key (the file holds {', '.join(KEY_NAMES)})")
    values: dict[str, bytes] = {}
    for name in KEY_NAMES:
        value = raw.get(name)
        if not isinstance(value, str) or len(value) != 2 * KEY_BYTES:
            raise SecretsError(f"{path}: {name}: required, {2 * KEY_BYTES} hex digits")
        try:
            values[name] = bytes.fromhex(value)
        except ValueError:
            raise SecretsError(f"{path}: {name}: required, {2 * KEY_BYTES} hex digits") from None
    return ServerKeys(**values)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
