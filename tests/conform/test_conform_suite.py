"""The suite lists every check module once, and the registry refuses a check it could not place."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import conform.checks
from conform.registry import GROUPS, check, declared
from conform.suite import MODULES, checks


def test_every_module_that_declares_a_check_is_listed_once() -> None:
    names = [info.name for info in pkgutil.iter_modules(conform.checks.__path__)]
    modules = [importlib.import_module(f"conform.checks.{name}") for name in names]
    declaring = sorted(m.__name__ for m in modules if declared(m))
    assert sorted(m.__name__ for m in MODULES) == declaring
    assert len(set(MODULES)) == len(MODULES)
    assert [m.__name__ for m in modules if not declared(m)] == ["conform.checks.common"]


def test_the_checks_come_by_group_then_as_the_modules_declare_them() -> None:
    groups = [c.group for c in checks()]
    assert list(dict.fromkeys(groups)) == list(GROUPS)
    assert sorted(groups, key=list(GROUPS).index) == groups
    agent = [c.name for c in checks(("agent",))]
    people = [c.name for c in checks(("people",))]
    assert (agent[:2], agent[-1]) == (["agent.get-work", "agent.claim"], "agent.claim-race")
    assert (people[:2], people[-1]) == (
        ["people.approval-item", "people.task-item"],
        "people.first-decision-wins",
    )
    assert len(set(groups)) == len(GROUPS)


def test_only_picks_groups_and_single_checks_in_report_order() -> None:
    picked = checks(("time", "people.stale"))
    assert [c.name for c in picked] == ["people.stale", *[c.name for c in checks() if c.group == "time"]]
    with pytest.raises(ValueError) as raised:
        checks(("people.nope", "nowhere", "people"))
    assert str(raised.value) == (
        f"unknown group or check people.nope, nowhere (groups: {', '.join(GROUPS)}; --list names every check)"
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nowhere.x", f"check 'nowhere.x': expected 'group.name' with a group of {', '.join(GROUPS)}"),
        ("people", f"check 'people': expected 'group.name' with a group of {', '.join(GROUPS)}"),
        ("people.stale", "check 'people.stale' is declared twice"),
    ],
)
def test_a_check_outside_the_groups_or_declared_twice_is_refused(name: str, message: str) -> None:
    before = [c.name for c in checks()]
    with pytest.raises(ValueError) as raised:
        check(name, "§")
    assert str(raised.value) == message
    assert [c.name for c in checks()] == before
