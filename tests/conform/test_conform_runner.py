"""The runner around the checks: several endpoints round-robin, groups of profiles a server does not
offer, checks that would wait too long, and checks that declare more than they show."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from conform import config as conform_config
from conform import contracts
from conform.client import Connection
from conform.clock import ServerClock
from conform.registry import Check
from conform.runner import RunOptions, _run_one, run
from conform.session import Session, Shared
from conform.suite import checks
from tests.conform.conform_support import served

IDENTITIES: dict[str, Any] = {
    name: {
        "token": f"tok-{name}",
        **({"person": f"{name}@example.com"} if not name.startswith("agent") else {}),
    }
    for name in conform_config.ROLES
}


def _shared(speed: float = 1.0) -> Shared:
    config = conform_config.parse(
        {"server": {"speed": speed}, "group": {"id": "g"}, "identities": IDENTITIES}
    )
    described = {"profiles": ["parallel-1"], "leaseSeconds": 600}
    return Shared(Connection(()), contracts.load(), config, ServerClock(speed), described, {})


async def test_calls_are_spread_over_every_endpoint(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    async with served(tmp_path, endpoints=2) as config:
        report = await run(RunOptions(config, only=("agent", "idempotency"), trace=trace))
        urls = config.servers
    assert len(set(urls)) == 2
    assert [r.line() for r in report.results if r.status != "PASS"] == []
    used = Counter(json.loads(line)["server"] for line in trace.read_text().splitlines())
    assert set(used) == set(urls)
    assert abs(used[urls[0]] - used[urls[1]]) <= 1


async def test_a_profile_the_server_does_not_offer_skips_its_group(tmp_path: Path) -> None:
    async with served(tmp_path, check_profile=False) as config:
        report = await run(RunOptions(config, only=("processes", "check")))
    assert report.described["profiles"] == ["parallel-1"]
    skipped = [(r.check, r.message) for r in report.results if r.status == "SKIP"]
    assert skipped == [(c.name, "profile check-1 not offered") for c in checks(("check",))]
    assert [r.check for r in report.results if r.status == "PASS"] == [c.name for c in checks(("processes",))]
    assert report.exit_code == 0


async def test_checks_that_would_wait_long_on_a_real_time_clock_skip_unless_slow() -> None:
    lease = Check("agent.waits", "§", lambda s: _nothing(s), waits="lease")
    minutes = Check("time.waits", "§", lambda s: _nothing(s), waits=180)
    slow = _shared(speed=1.0)
    skipped = await _run_one(slow, lease, RunOptions(slow.config))
    assert (skipped.status, skipped.message) == (
        "SKIP",
        "waits 600 s of server time, 600 s here; declare the server's clock speed (server.speed) or pass --slow",
    )
    assert (await _run_one(slow, minutes, RunOptions(slow.config))).status == "SKIP"
    assert (await _run_one(slow, lease, RunOptions(slow.config, slow=True))).status == "PASS"
    fast = _shared(speed=60.0)
    assert (await _run_one(fast, lease, RunOptions(fast.config))).status == "PASS"


async def _nothing(s: Session) -> None:
    return None


async def test_a_check_that_never_shows_an_error_it_declares_fails() -> None:
    shared = _shared()
    declared = Check(
        "agent.declares", "§", _nothing, covers=("claim/forbidden", "decide/precedence:stale>forbidden")
    )
    result = await _run_one(shared, declared, RunOptions(shared.config))
    assert (result.status, result.message) == (
        "FAIL",
        "the runner never saw claim/forbidden, which this check declares",
    )


async def test_an_unexpected_answer_is_a_fail_not_a_crash() -> None:
    async def broken(s: Session) -> None:
        raise KeyError("items")

    shared = _shared()
    result = await _run_one(shared, Check("lists.broken", "§", broken), RunOptions(shared.config))
    assert (result.status, result.message) == ("FAIL", "unexpected answer (KeyError: 'items')")
