"""Who is calling: the one fact every tool call starts from.

An identity comes from authentication (a token in the org config, or a verified OAuth access token),
never from a tool argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

IdentityKind = Literal["agent", "person"]


@dataclass(frozen=True)
class Identity:
    kind: IdentityKind
    id: str
    """An agent id (`a_screener`) or a person's email, the `person` format shown in `describe`."""
    operator: bool = False
    """Operators are people with the operator flag; they receive escalations and may cancel."""

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    @property
    def is_person(self) -> bool:
        return self.kind == "person"


def agent(agent_id: str) -> Identity:
    return Identity("agent", agent_id)


def person(email: str, *, operator: bool = False) -> Identity:
    return Identity("person", email, operator)
