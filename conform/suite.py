"""Every check the runner knows: the check modules, listed once, and the checks they declare.

The list is explicit so the registry below never imports a check back, and the report order never
depends on which module happened to be imported first: by group, then as listed, then as written.
"""

from __future__ import annotations

from types import ModuleType

from conform.checks import (
    arguments,
    checking,
    claims,
    decide_errors,
    describe,
    ending,
    idempotency,
    lists,
    parallel,
    processes,
    races,
    submissions,
    waits,
    work_items,
)
from conform.registry import GROUPS, Check, declared

MODULES: tuple[ModuleType, ...] = (
    describe,
    processes,
    arguments,
    claims,
    submissions,
    idempotency,
    work_items,
    decide_errors,
    races,
    waits,
    ending,
    lists,
    parallel,
    checking,
)


def checks(only: tuple[str, ...] = ()) -> list[Check]:
    """The checks in report order; `only` selects groups (`people`) or single checks (`people.stale`),
    in any mix."""
    order = list(GROUPS)
    known = sorted((c for module in MODULES for c in declared(module)), key=lambda c: order.index(c.group))
    unknown = [name for name in only if name not in GROUPS and name not in {c.name for c in known}]
    if unknown:
        raise ValueError(
            f"unknown group or check {', '.join(unknown)} (groups: {', '.join(GROUPS)}; "
            "--list names every check)"
        )
    return [c for c in known if not only or c.group in only or c.name in only]
