"""What a `[[notify]]` target receives: apc's JSON body or a Slack incoming-webhook body, and headers.

Every POST names the notification (`X-Apc-Notification`, the same for every target and every retry,
so a receiver can drop a repeat: delivery is at least once) and the delivery (`X-Apc-Delivery`). With
a `secret`, `X-Apc-Signature: sha256=<hex>` is HMAC-SHA256 over `<X-Apc-Timestamp>.<body>`: the
timestamp is signed with the body, so a receiver that checks its age also refuses replays.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from engine.notify import ESCALATION, NEW_WORK, OVERDUE, RUN_ENDED, Format
from engine.store.state import Notification

USER_AGENT = "apc-notify/1"
SIGNATURE_HEADER = "X-Apc-Signature"
TIMESTAMP_HEADER = "X-Apc-Timestamp"


def text_of(note: Notification) -> str:
    """One line a person can act on."""
    run = f"{note.process} run {note.run_id}"
    people = ", ".join(note.recipients)
    if note.kind == OVERDUE:
        return f"Overdue: {run}, step {note.step_id}" + (f" (for {people})" if people else "")
    if note.kind == ESCALATION:
        return f"Escalated: {run}, step {note.step_id} waits on the operators"
    if note.kind == NEW_WORK:
        return f"New work: {run}, step {note.step_id}" + (f" for {people}" if people else "")
    if note.kind == RUN_ENDED:
        return f"Run ended: {run}, outcome {note.outcome}" if note.outcome else f"Run cancelled: {run}"
    return f"{note.kind}: {run}"


def payload(note: Notification) -> dict[str, Any]:
    run: dict[str, Any] = {"id": note.run_id, "process": note.process}
    if note.kind == RUN_ENDED:
        run["outcome"] = note.outcome
    return {
        "id": note.id,
        "kind": note.kind,
        "at": note.at,
        "run": run,
        "step": note.step_id,
        "workItem": note.work_item,
        "recipients": list(note.recipients),
        "text": text_of(note),
    }


def body(note: Notification, shape: Format) -> bytes:
    value = {"text": slack_escape(text_of(note))} if shape == "slack" else payload(note)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def slack_escape(text: str) -> str:
    """Slack reads `&`, `<` and `>` as markup; data is shown as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def signature(secret: str, timestamp: int, content: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + content, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def headers(
    note: Notification, delivery_id: int, content: bytes, secret: str | None, timestamp: int
) -> dict[str, str]:
    out = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Apc-Notification": note.id,
        "X-Apc-Delivery": str(delivery_id),
    }
    if secret is not None:
        out[TIMESTAMP_HEADER] = str(timestamp)
        out[SIGNATURE_HEADER] = signature(secret, timestamp, content)
    return out
