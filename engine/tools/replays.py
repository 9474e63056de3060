"""Recorded results that a database copy must not give away: `claim` and `renew` carry lease tokens.

Spec §4 makes every write idempotent on `requestId`, and tools.md `claim` says a replay returns the
original result, token included; a hash cannot give the token back. So these two tools' results are
recorded encrypted (AES-GCM, with the replay key from the secrets file, bound to the request's id,
identity and tool), and opened only to answer a replay. Without the key (a lost secrets file, a copy of
`engine.db` elsewhere) such a replay answers `conflict`: the requestId was used, and what it returned
cannot be read back. Every other result is recorded as it is: it holds nothing a run view does not.

A result of more than `DEFLATE_OVER` bytes of JSON (a run view carries the whole run data, up to
`run_data_bytes`) is recorded deflated, sealed or not: a replay needs all of it, but text deflates
several times over, so the record costs the database a fraction of the pages and the disk.
"""

from __future__ import annotations

import base64
import json
import json.encoder
import os
import zlib
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from engine.store.records import compact_bytes

_quoted = json.encoder.encode_basestring_ascii

SEALED_TOOLS = frozenset({"claim", "renew"})
NONCE_BYTES = 12
DEFLATE_OVER = 8192
"""Results whose JSON is longer than this are recorded deflated (zlib's fastest level)."""
DEFLATED = b"z"
"""The first byte of a sealed plaintext that is deflated (a JSON text never starts with it)."""


class Replays:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def seal(self, request_id: str, identity: str, tool: str, result: Any) -> str:
        """What to record for this result, as JSON text: the result itself (deflated if large), or for
        a sealed tool its ciphertext."""
        text = compact_bytes(result)
        deflated = len(text) > DEFLATE_OVER
        if tool not in SEALED_TOOLS:
            if not deflated:
                return text.decode()
            return _wrapped("deflated", zlib.compress(text, 1))
        plain = DEFLATED + zlib.compress(text, 1) if deflated else text
        nonce = os.urandom(NONCE_BYTES)
        sealed = nonce + self._aead.encrypt(nonce, plain, _bound(request_id, identity, tool))
        return _wrapped("sealed", sealed)

    def open(self, request_id: str, identity: str, tool: str, text: str) -> tuple[bool, Any]:
        """(True, the original result), or (False, None) when a sealed record cannot be opened."""
        recorded = json.loads(text)
        if tool not in SEALED_TOOLS:
            if isinstance(recorded, dict) and recorded.keys() == {"deflated"}:
                return True, json.loads(zlib.decompress(base64.b64decode(recorded["deflated"])))
            return True, recorded
        try:
            sealed = base64.b64decode(recorded["sealed"], validate=True)
            plain = self._aead.decrypt(
                sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], _bound(request_id, identity, tool)
            )
        except (InvalidTag, KeyError, TypeError, ValueError):
            return False, None
        if plain.startswith(DEFLATED):
            plain = zlib.decompress(plain[len(DEFLATED) :])
        return True, json.loads(plain)


def _wrapped(key: str, payload: bytes) -> str:
    """`json.dumps({key: base64 of payload})`, spelled out: base64 needs no escaping."""
    return f'{{"{key}": "{base64.b64encode(payload).decode()}"}}'


def _bound(request_id: str, identity: str, tool: str) -> bytes:
    """The associated data: a record opens only under the request it was written for. The text of
    `json.dumps([request_id, identity, tool])`, from the C string quoting (what it costs is building
    `json.dumps`'s encoder, once per write)."""
    return f"[{_quoted(request_id)}, {_quoted(identity)}, {_quoted(tool)}]".encode()
