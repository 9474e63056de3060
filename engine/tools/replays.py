"""Recorded results that a database copy must not give away: `claim` and `renew` carry lease tokens.

Spec §4 makes every write idempotent on `requestId`, and tools.md `claim` says a replay returns the
original result, token included; a hash cannot give the token back. So these two tools' results are
recorded encrypted (AES-GCM, with the replay key from the secrets file, bound to the request's id,
identity and tool), and opened only to answer a replay. Without the key (a lost secrets file, a copy of
`engine.db` elsewhere) such a replay answers `conflict`: the requestId was used, and what it returned
cannot be read back. Every other result is recorded as it is: it holds nothing a run view does not.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SEALED_TOOLS = frozenset({"claim", "renew"})
NONCE_BYTES = 12


class Replays:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def seal(self, request_id: str, identity: str, tool: str, result: Any) -> Any:
        """What to record for this result: the result itself, or for a sealed tool its ciphertext."""
        if tool not in SEALED_TOOLS:
            return result
        nonce = os.urandom(NONCE_BYTES)
        plain = json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()
        sealed = nonce + self._aead.encrypt(nonce, plain, _bound(request_id, identity, tool))
        return {"sealed": base64.b64encode(sealed).decode()}

    def open(self, request_id: str, identity: str, tool: str, recorded: Any) -> tuple[bool, Any]:
        """(True, the original result), or (False, None) when a sealed record cannot be opened."""
        if tool not in SEALED_TOOLS:
            return True, recorded
        try:
            sealed = base64.b64decode(recorded["sealed"], validate=True)
            plain = self._aead.decrypt(
                sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], _bound(request_id, identity, tool)
            )
        except (InvalidTag, KeyError, TypeError, ValueError):
            return False, None
        return True, json.loads(plain)


def _bound(request_id: str, identity: str, tool: str) -> bytes:
    """The associated data: a record opens only under the request it was written for."""
    return json.dumps([request_id, identity, tool]).encode()
