"""Paging cursors: opaque to callers and signed, so only a cursor this server issued is ever read.

A cursor is the position a page ended at (a name, a sequence number, a time) as base64url JSON,
followed by an HMAC over the read it belongs to and that JSON, with the cursor key from the secrets
file. Anything else (a forged position, one from another read or another server, garbage) is
`invalid` with `cursor: not valid` before it reaches the store; a forged value must never surface as
an error inside the store, which would answer `retry` and send a client that follows spec §4.3 into
retrying forever.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any, Literal

from engine.tools.errors import ToolError, invalid

Read = Literal["list_runs", "list_processes", "agent_work", "person_work", "run_log"]

MAX_CURSOR_CHARS = 512
MAC_BYTES = 16
MAX_POSITION = 2**62
"""Sequence numbers and indexes the store can hold, whatever a cursor says (SQLite integers are 64-bit)."""


class Cursors:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, read: Read, body: str) -> str:
        digest = hmac.new(self._key, f"{read}\n{body}".encode(), hashlib.sha256).digest()[:MAC_BYTES]
        return _b64(digest)

    def encode(self, read: Read, position: list[Any]) -> str:
        body = _b64(json.dumps(position, separators=(",", ":"), ensure_ascii=False).encode())
        return f"{body}.{self._mac(read, body)}"

    def decode(self, read: Read, cursor: str, shape: tuple[type, ...]) -> list[Any]:
        """The position of a cursor this server issued for `read`; `invalid` for anything else."""
        if len(cursor) > MAX_CURSOR_CHARS:
            raise _not_valid()
        body, dot, mac = cursor.partition(".")
        if not dot or not hmac.compare_digest(mac.encode(), self._mac(read, body).encode()):
            raise _not_valid()
        try:
            value = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (ValueError, binascii.Error):
            raise _not_valid() from None
        if not isinstance(value, list) or len(value) != len(shape):
            raise _not_valid()
        for item, kind in zip(value, shape, strict=True):
            if not isinstance(item, kind) or isinstance(item, bool):
                raise _not_valid()
            if isinstance(item, int) and not 0 <= item <= MAX_POSITION:
                raise _not_valid()
        return value


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _not_valid() -> ToolError:
    return invalid("the cursor was not issued by this server", ["cursor: not valid"])
