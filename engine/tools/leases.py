"""Lease tokens that say which run and step they were issued for, signed, so a write checks one without a
table to look it up in.

A token is base64url of 12 random bytes, the run id and the step id (a newline between the two ids),
then `.` and an HMAC-SHA256 tag over that text, cut to 16 bytes, with the lease key (`ServerKeys.lease`,
which every server on one database shares). The tag makes a token this server did not issue (altered,
or signed with another key) `invalid` before anything is read; the random bytes make each claim's and
renew's token a new one, and the claim keeps its SHA-256, which is what makes an older token `stale`.

Tokens issued before this format (random base64url text, never with a `.`) were indexed in the
`tokens` table, where they are still looked up until their leases end.
"""

from __future__ import annotations

import base64
import hmac
import os

NONCE_BYTES = 12
TAG_BYTES = 16
SEPARATOR = "."
"""Between the body and the tag; base64url never has it, so a token from before has none."""


class Leases:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def _tag(self, body: str) -> str:
        return _b64(hmac.digest(self._key, body.encode(), "sha256")[:TAG_BYTES])

    def issue(self, run_id: str, step_id: str) -> str:
        """A new token for the claim of `step_id` in `run_id`."""
        body = _b64(os.urandom(NONCE_BYTES) + f"{run_id}\n{step_id}".encode())
        return f"{body}{SEPARATOR}{self._tag(body)}"

    def holder(self, token: str) -> tuple[str, str] | None:
        """The run and step a signed token was issued for; None if it does not verify."""
        body, _, tag = token.partition(SEPARATOR)
        if not hmac.compare_digest(tag.encode(), self._tag(body).encode()):
            return None
        # Only a body this server signed gets here: it decodes (unless the lease key got out).
        try:
            ids = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))[NONCE_BYTES:].decode()
        except ValueError:
            return None
        run_id, newline, step_id = ids.partition("\n")
        return (run_id, step_id) if newline else None


def is_signed(token: str) -> bool:
    """Whether `token` is of the signed format (else it may be one from before, in the `tokens` table)."""
    return SEPARATOR in token


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
