"""`apc_whoami`: who the bearer token acts as, for a client that wants to show it.

No core tool returns the caller's identity, so a console could only guess it from the token. This
read-only extra tool answers for every authenticated identity; other servers lack it, and clients
fall back to what the token says about itself.
"""

from __future__ import annotations

from typing import Any

from engine.http.extra import ExtraTool
from engine.identity import Identity

TOOL = "apc_whoami"

INPUT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

DATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "apc_whoami result",
    "properties": {
        "kind": {"type": "string", "enum": ["person", "agent"], "description": "What the token acts as."},
        "id": {"type": "string", "description": "The agent id, or the person's email."},
        "email": {"type": ["string", "null"], "description": "The person's email; null for an agent."},
        "operator": {"type": "boolean", "description": "Whether this person is an operator."},
    },
    "required": ["kind", "id", "email", "operator"],
    "additionalProperties": False,
}


def who(identity: Identity) -> dict[str, Any]:
    """The result `data` for `identity`."""
    return {
        "kind": identity.kind,
        "id": identity.id,
        "email": identity.id if identity.is_person else None,
        "operator": identity.is_person and identity.operator,
    }


def whoami_tool() -> ExtraTool:
    async def handle(identity: Identity, arguments: dict[str, Any]) -> dict[str, Any]:
        if arguments:
            issue = f"{sorted(arguments)[0]}: not an argument of {TOOL}"
            return {"ok": False, "error": {"code": "invalid", "message": issue, "issues": [issue]}}
        return {"ok": True, "data": who(identity)}

    return ExtraTool(
        name=TOOL,
        title="Who am I",
        description=(
            "Who this connection's bearer token acts as: a person (with email and whether they are an "
            "operator) or an agent. Takes no arguments."
        ),
        input_schema=INPUT_SCHEMA,
        data_schema=DATA_SCHEMA,
        handler=handle,
        may_call=lambda _identity: True,
        read_only=True,
    )
