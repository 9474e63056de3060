"""What a check is: its group, the spec section it comes from, what it covers and how long it waits.

A check is an async function of a `Session`, declared with `@check("group.name", "section")` in its
module; `conform.suite` lists the modules and asks each for its checks, so this module imports none.
Its `covers` names the error answers it provokes (`claim/conflict:claimed_by_you`, `decide/stale`) and
the decide precedence steps it orders (`decide/precedence:stale>forbidden`); the runner verifies at
run time that a check saw every error it declares, so the coverage list cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from conform.session import Session

CheckFunction = Callable[["Session"], Awaitable[None]]
Wait = float | Literal["lease"]
"""Server seconds a check waits for the server's clock to move, or the lease."""


@dataclass(frozen=True)
class Group:
    name: str
    title: str
    profile: str | None = None
    """The profile `describe` must list for the group to run; its checks SKIP otherwise."""


GROUPS: dict[str, Group] = {
    group.name: group
    for group in (
        Group("describe", "what the server says it offers (spec §4.1, tools.md describe)"),
        Group("processes", "published processes: listing, versions, inputs, body (spec §2, §6 rule 5)"),
        Group("arguments", "arguments that break a tool's schema are invalid first (spec §6 rule 3)"),
        Group("agent", "the agent loop: claim, renew, submit, escalate, upload, handoff (spec §3.3)"),
        Group("idempotency", "requestId replays and conflicts (spec §4)"),
        Group("people", "work items and decide: every kind, precedence, snapshots, rework (spec §3.4)"),
        Group("time", "waits, wait_until, wait_for and events, timeouts, due (spec §2.2, §3.6)"),
        Group("ending", "how runs end and what an ended run refuses (spec §3.5)"),
        Group("lists", "paging and filters of get_work, list_runs, list_processes (tools.md)"),
        Group("parallel", "fork and join (parallel profile)", "parallel-1"),
        Group("check", "model checks: verdicts, refusals, unsure escalations (check profile)", "check-1"),
    )
}


@dataclass(frozen=True)
class Check:
    name: str
    section: str
    run: CheckFunction
    covers: tuple[str, ...] = ()
    waits: Wait | None = None

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]


_DECLARED: dict[str, list[Check]] = {}
"""The checks declared so far, by the name of the module that declares them."""


def check(
    name: str, section: str, *, covers: tuple[str, ...] = (), waits: Wait | None = None
) -> Callable[[CheckFunction], CheckFunction]:
    """Declare a check of the function's module; `name` is `group.check-name`, `section` where the
    rule is written."""
    group, _, short = name.partition(".")
    if group not in GROUPS or not short:
        raise ValueError(f"check {name!r}: expected 'group.name' with a group of {', '.join(GROUPS)}")
    if any(c.name == name for declared in _DECLARED.values() for c in declared):
        raise ValueError(f"check {name!r} is declared twice")

    def declare(run: CheckFunction) -> CheckFunction:
        _DECLARED.setdefault(run.__module__, []).append(Check(name, section, run, covers, waits))
        return run

    return declare


def declared(module: ModuleType) -> list[Check]:
    """The checks `module` declares, in the order it declares them."""
    return list(_DECLARED.get(module.__name__, ()))
