"""One conformance run: connect, learn what the server offers, run the checks, clean up, report.

Checks run concurrently (`jobs` at a time), since most of their time is spent waiting on the
server's clock; each starts its own runs and looks only at those, so they cannot disturb each other.
Lines are printed in report order as soon as every check before them has finished. At the end, every
run the checks left open is cancelled, so a second conformance run starts from a quiet server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from conform import catalog, contracts
from conform.client import Connection, TransportError
from conform.clock import ServerClock
from conform.config import AGENTS, ConformConfig
from conform.expect import CheckFailed, CheckSkipped
from conform.registry import GROUPS, Check
from conform.report import Report, Result
from conform.session import Session, Shared
from conform.suite import checks

DEFAULT_JOBS = 8
MAX_REAL_WAIT_SECONDS = 60.0
"""A check that would wait longer than this for the server's clock is skipped unless `--slow`."""
CHECK_TIMEOUT_SECONDS = 300.0
CLEANUP_REASON = "apc conform: the conformance run is over"


class SetupError(Exception):
    """The run cannot start: the server is unreachable, a token is refused, or the runner's processes
    are not published. The message says what to do."""


@dataclass(frozen=True)
class RunOptions:
    config: ConformConfig
    only: tuple[str, ...] = ()
    schemas: Path | None = None
    """A copy of the spec's `schemas/core-2` to check results against instead of the runner's own."""
    slow: bool = False
    """Run checks that wait on the server's clock even when that takes long in real time."""
    jobs: int = DEFAULT_JOBS
    trace: Path | None = None
    """Write every call and its answer to this file, one JSON object a line."""


async def run(options: RunOptions, on_result: Callable[[Result], None] | None = None) -> Report:
    """Run the selected checks against the config's servers; `on_result` sees each line in order."""
    started = time.monotonic()
    try:
        schema_set = contracts.load(options.schemas)
    except contracts.SchemaError as exc:
        raise SetupError(str(exc)) from None
    selected = checks(options.only)
    config = options.config
    connection = Connection(config.servers)
    trace = options.trace.open("w", encoding="utf-8") if options.trace is not None else None
    try:
        await connection.open(list(config.actors.values()))
        shared = await _prepare(connection, schema_set, config, trace)
        report = Report(config.servers, schema_set.source, shared.described, config.speed)
        report.results = await _run_checks(shared, selected, options, on_result)
        report.cancelled = await _cancel_open_runs(shared)
    except TransportError as exc:
        raise SetupError(str(exc)) from None
    finally:
        await connection.close()
        if trace is not None:
            trace.close()
    report.runs = dict(shared.records.runs)
    report.uploads = list(shared.records.uploads)
    report.seconds = time.monotonic() - started
    return report


async def _prepare(
    connection: Connection, schema_set: contracts.Contracts, config: ConformConfig, trace: TextIO | None
) -> Shared:
    """describe, the published processes, and the agents' ids, before any check runs."""
    clock = ServerClock(config.speed)
    shared = Shared(connection, schema_set, config, clock, {}, {})
    if trace is not None:
        out = trace

        def write(entry: dict[str, Any]) -> None:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")

        shared.trace = write
    session = Session(shared)
    try:
        shared.described = await session.ok(session.agent, "describe")
        listed = await session.everything(session.agent, "list_processes")
    except CheckFailed as exc:
        raise SetupError(f"the server's first answers are unusable: {exc}") from None
    versions = {item["name"]: int(item["version"]) for item in listed}
    needed = catalog.needed(shared.described["profiles"])
    missing = [p.name for p in needed if p.name not in versions]
    if missing:
        raise SetupError(
            f"not published on the server: {', '.join(missing)}. Publish the runner's processes first "
            f"(apc conform --print-setup DIR writes them), every role bound to group {config.group!r}"
        )
    shared.versions = versions
    await _learn_agent_ids(shared, session)
    return shared


async def _learn_agent_ids(shared: Shared, session: Session) -> None:
    """An agent's id is what the server records as `startedBy`; the config may name it or not."""
    actors = dict(shared.config.actors)
    for name in AGENTS:
        actor = actors[name]
        try:
            view = await session.start("conform-queue", {"n": 0}, actor)
            await session.ok(session.operator, "cancel", runId=view["run"]["id"], reason=CLEANUP_REASON)
        except CheckFailed as exc:
            raise SetupError(f"{name} cannot start a run of conform-queue: {exc}") from None
        recorded = view["run"]["startedBy"]
        if actor.value is not None and actor.value != recorded:
            raise SetupError(f"identities.{name}.id is {actor.value!r} but the server records {recorded!r}")
        actors[name] = dataclasses.replace(actor, value=recorded)
    shared.config = dataclasses.replace(shared.config, actors=actors)


async def _run_checks(
    shared: Shared, selected: list[Check], options: RunOptions, on_result: Callable[[Result], None] | None
) -> list[Result]:
    results: list[Result | None] = [None] * len(selected)
    printed = 0
    gate = asyncio.Semaphore(max(1, options.jobs))

    async def one(index: int, check: Check) -> None:
        nonlocal printed
        async with gate:
            results[index] = await _run_one(shared, check, options)
        while printed < len(results) and (ready := results[printed]) is not None:
            if on_result is not None:
                on_result(ready)
            printed += 1

    await asyncio.gather(*(one(i, c) for i, c in enumerate(selected)))
    return [r for r in results if r is not None]


async def _run_one(shared: Shared, check: Check, options: RunOptions) -> Result:
    skip = _skip_reason(shared, check, options)
    if skip is not None:
        return Result(check.name, check.section, "SKIP", skip)
    session = Session(shared, check.name)
    started = time.monotonic()
    status: Any = "PASS"
    message = ""
    try:
        await asyncio.wait_for(check.run(session), None if options.slow else CHECK_TIMEOUT_SECONDS)
        missing = [key for key in check.covers if "/precedence:" not in key and key not in session.covered]
        if missing:
            status, message = "FAIL", f"the runner never saw {', '.join(missing)}, which this check declares"
    except CheckFailed as exc:
        status, message = "FAIL", str(exc)
    except CheckSkipped as exc:
        status, message = "SKIP", str(exc)
    except TimeoutError:
        status, message = "FAIL", f"no result within {CHECK_TIMEOUT_SECONDS:.0f} s"
    except Exception as exc:
        status, message = "FAIL", f"unexpected answer ({type(exc).__name__}: {exc})"
    return Result(check.name, check.section, status, message, time.monotonic() - started, check.covers)


def _skip_reason(shared: Shared, check: Check, options: RunOptions) -> str | None:
    profile = GROUPS[check.group].profile
    if profile is not None and profile not in shared.described["profiles"]:
        return f"profile {profile} not offered"
    if check.waits is None or options.slow:
        return None
    server_seconds = shared.described["leaseSeconds"] if check.waits == "lease" else check.waits
    real = float(server_seconds) / shared.config.speed
    if real <= MAX_REAL_WAIT_SECONDS:
        return None
    return (
        f"waits {server_seconds:g} s of server time, {real:.0f} s here; declare the server's clock "
        "speed (server.speed) or pass --slow"
    )


async def _cancel_open_runs(shared: Shared) -> list[str]:
    """Cancel every run this conformance run started that is still active or waiting."""
    session = Session(shared, "cleanup")
    mine = shared.records.runs
    cancelled: list[str] = []
    try:
        for state in ("active", "waiting"):
            for item in await session.everything(session.operator, "list_runs", state=state, limit=100):
                if item["id"] in mine and item["id"] not in cancelled:
                    envelope = await session.send(
                        session.operator, "cancel", runId=item["id"], reason=CLEANUP_REASON
                    )
                    if envelope["ok"]:
                        cancelled.append(item["id"])
    except CheckFailed:
        return cancelled
    return cancelled
