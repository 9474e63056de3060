"""The organization the implementation tests share: its people, agents and groups, and `make_org`.

Every identity's bearer token follows one rule (`token`), so a test names a token by who holds it. A
folder whose org differs (the console's groups, the endpoint's Omar without a token) says how where it
calls `make_org`. The conformance harness (tests/conformance) keeps its own org on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.evaluator import CheckConfig
from engine.identity import Identity, agent, person
from engine.notify import NotifyTarget
from engine.org import OrgConfig, ServerSettings

MIRA = person("mira@example.com")
OMAR = person("omar@example.com")
LENA = person("lena@example.com")
SUE = person("sue@example.com")
OPS = person("ops@example.com", operator=True)
SCREENER = agent("a_screener")
OTHER_AGENT = agent("a_other")

GROUPS: Mapping[str, Sequence[Identity]] = {"g_finance": (MIRA, OMAR), "g_legal": (LENA,)}
PEOPLE: Sequence[Identity] = (MIRA, OMAR, LENA, OPS)
"""The people with a token of their own, operators included."""
AGENTS: Sequence[Identity] = (SCREENER, OTHER_AGENT)


def token(who: Identity) -> str:
    """The bearer token `make_org` gives `who`: `tok-mira-0001` (what a console shows of it: `…0001`)."""
    return f"tok-{who.id.split('@')[0]}-0001"


def make_org(
    *,
    groups: Mapping[str, Sequence[Identity]] = GROUPS,
    people: Sequence[Identity] = PEOPLE,
    agents: Sequence[Identity] = AGENTS,
    server: ServerSettings | None = None,
    check: CheckConfig | None = None,
    notify: tuple[NotifyTarget, ...] = (),
) -> OrgConfig:
    """The org of `groups`, of `people` (an operator by its flag) and `agents`, each with its `token`."""
    return OrgConfig.build(
        groups={group: [member.id for member in members] for group, members in groups.items()},
        people={who.id: token(who) for who in people if not who.operator},
        operators={who.id: token(who) for who in people if who.operator},
        agents={who.id: token(who) for who in agents},
        server=server,
        check=check,
        notify=notify,
    )
