"""The runner catches what it claims to check: our server, started in-process with one behaviour
broken on purpose (monkeypatched here, never a switch of `apc serve`), is reported FAIL under the
check named for that behaviour when the runner runs the matching group through its Python API."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from conform import config as conform_config
from conform.runner import RunOptions, run
from conform.setup import write_setup
from engine.auth import OrgConfig
from engine.clock import SystemClock
from engine.core import Engine
from engine.document import fields
from engine.http.app import first_free_port, start_server
from engine.runtime.machine import Machine
from engine.store.sqlite import SqliteStore
from engine.tools import errors, runs, views

SPEED = 120.0
LEASE_SECONDS = 240
"""Two real seconds: checks that wait for a lease to end stay short."""
TICK_SECONDS = 0.1


@contextlib.asynccontextmanager
async def served(root: Path) -> AsyncIterator[conform_config.ConformConfig]:
    """Our engine behind its MCP endpoint in this process, on the org `--print-setup` writes."""
    files = write_setup(root / "setup", SPEED)
    org = OrgConfig.load(files.org)
    org = dataclasses.replace(org, server=dataclasses.replace(org.server, lease_seconds=LEASE_SECONDS))
    port = first_free_port("127.0.0.1", start=29765)
    engine = await Engine.open(
        root / "data", org, clock=SystemClock(SPEED), public_base_url=f"http://127.0.0.1:{port}"
    )
    ticking: asyncio.Task[None] | None = None
    server = None
    try:
        published = await engine.publish_config_processes()
        assert [r.issues for r in published if not r.ok] == []
        server = await start_server(engine, port=port)

        async def tick() -> None:
            while True:
                await engine.tick()
                await asyncio.sleep(TICK_SECONDS)

        ticking = asyncio.create_task(tick())
        yield dataclasses.replace(conform_config.load(files.conform), servers=(server.url,))
    finally:
        if ticking is not None:
            ticking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticking
        if server is not None:
            await server.stop()
        await engine.close()


def _precedence(order: tuple[str, ...]) -> Callable[[pytest.MonkeyPatch], None]:
    return lambda mp: mp.setattr(errors, "PRECEDENCE", order)


def _replay_new_token(mp: pytest.MonkeyPatch) -> None:
    original = SqliteStore.get_request

    async def get_request(self: SqliteStore, request_id: str) -> Any:
        record = await original(self, request_id)
        if record is not None and record.tool == "claim":
            record = dataclasses.replace(record, result={**record.result, "token": secrets.token_urlsafe(32)})
        return record

    mp.setattr(SqliteStore, "get_request", get_request)


def _snapshot_unchecked(mp: pytest.MonkeyPatch) -> None:
    original = runs.first_error
    mp.setattr(
        runs, "first_error", lambda checks: original({k: v for k, v in checks.items() if k != "stale"})
    )


def _without_timers(kind: str) -> Callable[[pytest.MonkeyPatch], None]:
    """The server forgets every timer of one kind (`lease`, `due`): it never fires."""

    def breaks(mp: pytest.MonkeyPatch) -> None:
        timers = Machine.timers
        mp.setattr(Machine, "timers", lambda self: [t for t in timers(self) if t[1] != kind])
        if kind == "lease":
            mp.setattr(Machine, "expire_leases", lambda self: None)

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
        report = await run(RunOptions(config, only=(group,)))
    result = next(r for r in report.results if r.check == name)
    assert result.status == "FAIL", result
    assert result.message
    assert {r.group for r in report.results} == {group}


async def test_the_same_groups_pass_on_the_unbroken_server(tmp_path: Path) -> None:
    groups = tuple(sorted({group for _, group, _ in MUTATIONS.values()}))
    async with served(tmp_path) as config:
        report = await run(RunOptions(config, only=groups))
    assert [r.line() for r in report.results if r.status != "PASS"] == []
    assert {r.group for r in report.results} == set(groups)
