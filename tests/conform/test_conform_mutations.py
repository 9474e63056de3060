"""The runner catches what it claims to check: our server, started in-process with one behaviour
broken on purpose (monkeypatched here, never a switch of `apc serve`), is reported FAIL under the
check named for that behaviour when the runner runs that check through its Python API; the same
groups pass in full on the unbroken server."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conform.runner import RunOptions, run
from engine.document import fields
from engine.runtime.machine import Machine
from engine.tools import errors, runs, views
from engine.tools.replays import Replays
from tests.conform.conform_support import served


def _precedence(order: tuple[str, ...]) -> Callable[[pytest.MonkeyPatch], None]:
    return lambda mp: mp.setattr(errors, "PRECEDENCE", order)


def _replay_new_token(mp: pytest.MonkeyPatch) -> None:
    original = Replays.open

    def open_replay(
        self: Replays, request_id: str, identity: str, tool: str, recorded: Any
    ) -> tuple[bool, Any]:
        readable, result = original(self, request_id, identity, tool, recorded)
        if readable and tool == "claim":
            result = {**result, "token": secrets.token_urlsafe(32)}
        return readable, result

    mp.setattr(Replays, "open", open_replay)


def _snapshot_unchecked(mp: pytest.MonkeyPatch) -> None:
    original = errors.first_error
    mp.setattr(
        runs, "first_error", lambda checks: original({k: v for k, v in checks.items() if k != "stale"})
    )


def _without_timers(kind: str) -> Callable[[pytest.MonkeyPatch], None]:
    """The server forgets every timer of one kind (`lease`, `due`): it never fires."""

    def breaks(mp: pytest.MonkeyPatch) -> None:
        timers = Machine.timers
        mp.setattr(Machine, "timers", lambda self: [t for t in timers(self) if t[1] != kind])
        if kind == "lease":
            mp.setattr(Machine, "_end_lease", lambda self, step_id: None)

    return breaks


def _history_lost(mp: pytest.MonkeyPatch) -> None:
    def record(self: Machine, step_id: str, fields: dict[str, Any]) -> None:
        self.run.data[step_id] = {**fields, "history": []}

    mp.setattr(Machine, "record", record)


MUTATIONS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], str, str]] = {
    "error precedence swapped": (
        _precedence(("run_ended", "not_found", "already_decided", "stale", "forbidden")),
        "people",
        "people.already-decided",
    ),
    "run_ended checked last": (
        _precedence(("already_decided", "not_found", "stale", "forbidden", "run_ended")),
        "ending",
        "ending.run-ended-first",
    ),
    "replay returning a new token": (_replay_new_token, "idempotency", "idempotency.claim-after-lease"),
    "overdue never set": (_without_timers("due"), "time", "time.overdue"),
    "snapshot not checked": (_snapshot_unchecked, "people", "people.stale"),
    "handoff dropped": (
        lambda mp: mp.setattr(views, "handoff", lambda st: None),
        "agent",
        "agent.lease-expiry",
    ),
    "lease not expiring": (_without_timers("lease"), "agent", "agent.lease-expiry"),
    "acceptance skipping one_of": (
        lambda mp: mp.setattr(fields, "_same", lambda value, choice: True),
        "agent",
        "agent.one-of",
    ),
    "history not kept": (_history_lost, "people", "people.history"),
}


@pytest.mark.parametrize("mutation", list(MUTATIONS))
async def test_a_broken_behaviour_fails_its_check(
    mutation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    breaks, group, name = MUTATIONS[mutation]
    breaks(monkeypatch)
    async with served(tmp_path) as config:
        report = await run(RunOptions(config, only=(name,)))
    [result] = report.results
    assert (result.check, result.group, result.status) == (name, group, "FAIL"), result
    assert result.message


async def test_the_same_groups_pass_on_the_unbroken_server(tmp_path: Path) -> None:
    groups = tuple(sorted({group for _, group, _ in MUTATIONS.values()}))
    async with served(tmp_path) as config:
        report = await run(RunOptions(config, only=groups))
    assert [r.line() for r in report.results if r.status != "PASS"] == []
    assert {r.group for r in report.results} == set(groups)
