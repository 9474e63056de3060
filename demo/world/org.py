"""The demo organization: one group per role the sample processes use, people to work them, an
operator in every group, agents with their own tokens, and an event feed.

Every sample process binds each role to the group of the same name (sample_processes/README.md), so
one org serves all of them. With an answers file the org has the scripted evaluator, so the server
offers check-1 and the processes with a `check` publish too. Tokens are fresh for each demo, so a demo data folder never holds a
credential that outlives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.evaluator import CheckConfig
from engine.identity import Identity
from engine.org import OrgConfig, ServerSettings, new_token

ROLES = ("finance-approver", "ops-lead", "security-reviewer", "hr-partner", "legal-counsel", "support-lead")
OPERATOR = "operator@example.com"
ROLE_PEOPLE: dict[str, tuple[str, ...]] = {
    "finance-approver": ("fiona@example.com",),
    "ops-lead": ("omar@example.com",),
    "security-reviewer": ("sana@example.com",),
    "hr-partner": ("hana@example.com",),
    "legal-counsel": ("leo@example.com",),
    "support-lead": ("sue@example.com",),
}
REQUESTERS = ("mira@example.com", "lena@example.com", "sam@example.com")
"""People who start runs and are named by person inputs: managers, owners, adjusters."""
AGENT_NAMES = ("agent-ada", "agent-bo", "agent-cy", "agent-dee", "agent-eli", "agent-fay")
EVENT_FEED = "event-feed"
"""The agent identity the demo's outside world delivers events as."""
GUEST_AGENT = "guest-agent"
"""A spare agent identity for the operator to connect an agent of their own to the demo endpoint."""


@dataclass(frozen=True)
class DemoOrg:
    org: OrgConfig
    tokens: dict[str, str]
    """Identity id (email or agent id) to its bearer token."""
    agents: tuple[str, ...]
    """The demo agents' ids."""
    operator_email: str = OPERATOR
    person_pool: tuple[str, ...] = (*REQUESTERS, OPERATOR)
    """Who a `person` input or output may name: people the org knows, so person paths resolve."""
    event_feed_id: str = EVENT_FEED

    @property
    def operator(self) -> Identity:
        return Identity("person", self.operator_email, operator=True)

    @property
    def people(self) -> list[Identity]:
        """Every person, the operator included."""
        return [Identity("person", p.email, p.operator) for p in self.org.people.values()]

    @property
    def event_feed(self) -> Identity:
        return Identity("agent", self.event_feed_id)

    def own_groups(self, email: str) -> list[str]:
        """The groups a person works for; an operator's memberships are for seeing, not deciding."""
        if self.org.is_operator(Identity("person", email)):
            return []
        return [gid for gid, members in self.org.groups.items() if email in members]


def build_demo_org(
    agents: int = 3,
    *,
    lease_seconds: int = 600,
    token: Callable[[], str] = new_token,
    check_answers: Path | None = None,
) -> DemoOrg:
    """The org with `agents` demo agents (at most len(AGENT_NAMES)) and the given lease length, and
    the scripted evaluator answering from `check_answers` when given."""
    if not 1 <= agents <= len(AGENT_NAMES):
        raise ValueError(f"agents must be between 1 and {len(AGENT_NAMES)}")
    names = AGENT_NAMES[:agents]
    people = [email for members in ROLE_PEOPLE.values() for email in members] + list(REQUESTERS)
    tokens = {who: token() for who in (OPERATOR, *people, *names, EVENT_FEED, GUEST_AGENT)}
    org = OrgConfig.build(
        groups={role: [*ROLE_PEOPLE[role], OPERATOR] for role in ROLES},
        people={email: tokens[email] for email in people},
        operators={OPERATOR: tokens[OPERATOR]},
        agents={name: tokens[name] for name in (*names, EVENT_FEED, GUEST_AGENT)},
        server=ServerSettings(lease_seconds=lease_seconds),
        check=CheckConfig("scripted", answers=check_answers) if check_answers is not None else None,
    )
    return DemoOrg(org, tokens, names)
