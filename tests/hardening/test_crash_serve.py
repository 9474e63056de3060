"""`apc serve` killed with SIGKILL under concurrent load, several times, loses nothing it acknowledged.

Each round starts the server on the same data folder, drives agents, reviewers, an operator and a
starter against it until a number of writes were acknowledged, and kills it while calls are in flight.
A last start then proves, through the protocol and in the database:
- 0 lost acknowledged writes: every acknowledged run, submission, decision, event and cancellation
  is in run data, and every acknowledged write replays to exactly the answer it got;
- one lease holder: every lease token that a renew or submit consumed is refused;
- 0 invariant breaks in the store (tests/hardening/invariants.py).
With `--speed 60` leases (10 s), `due` and timeouts fire during the load, and server time must stay in
order across the restarts. `make soak` runs many more rounds.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.org import OrgConfig
from tests.hardening.crash_load import Ack, Load
from tests.hardening.invariants import check_store
from tests.hardening.serve_support import OPERATOR, start_serve, write_config
from tests.support.calls import rid
from tests.support.rpc import Rpc


def _records(view: dict[str, Any], step: str) -> list[dict[str, Any]]:
    record = view["data"]["steps"].get(step)
    if record is None:
        return []
    current = {k: v for k, v in record.items() if k != "history"}
    return [*record["history"], *([current] if current else [])]


def _token_of(ack: Ack) -> str | None:
    token = ack.arguments.get("token")
    return token if isinstance(token, str) else None


async def _verify(rpc: Rpc, acks: list[Ack]) -> tuple[list[str], int]:
    """(every lost or changed acknowledged write, how many acknowledged writes were checked)."""
    problems: list[str] = []
    views: dict[str, dict[str, Any]] = {}

    async def view(run_id: str) -> dict[str, Any]:
        if run_id not in views:
            views[run_id] = (await rpc.call(OPERATOR[1], "get_run", {"runId": run_id}))["data"]
        return views[run_id]

    done = [a for a in acks if a.envelope["ok"]]
    for ack in done:
        again = await rpc.call(ack.token, ack.tool, ack.arguments)
        if again != ack.envelope:
            problems.append(f"{ack.tool} {ack.arguments['requestId']} replays as {again}")
    for ack in done:
        data = ack.envelope["data"]
        if ack.tool == "start_run":
            if (await view(data["run"]["id"]))["run"]["id"] != data["run"]["id"]:
                problems.append(f"run {data['run']['id']} lost")
        elif ack.tool == "submit":
            marker, run_id = ack.arguments["summary"], data["run"]["id"]
            steps = [
                s for s in data["data"]["steps"] if any(r.get("summary") == marker for r in _records(data, s))
            ]
            later = await view(run_id)
            if len(steps) != 1 or not any(r.get("summary") == marker for r in _records(later, steps[0])):
                problems.append(f"submission {marker} lost from {run_id}")
        elif ack.tool == "decide":
            note = ack.arguments["note"]
            if not any(r.get("note") == note for r in _records(await view(data["run"]["id"]), "review")):
                problems.append(f"decision {note} lost from {data['run']['id']}")
        elif ack.tool == "send_event" and data["consumedBy"] is not None:
            step, ref = data["consumedBy"], ack.arguments["data"]
            if not any(r.get("output") == ref for r in _records(await view(ack.arguments["runId"]), step)):
                problems.append(f"event {ref} lost from {ack.arguments['runId']}.{step}")
        elif ack.tool == "cancel" and (await view(data["run"]["id"]))["run"]["state"] != "cancelled":
            problems.append(f"cancellation of {data['run']['id']} lost")
    consumed = {_token_of(a) for a in done if a.tool in ("renew", "submit")} - {None}
    for token in sorted(t for t in consumed if t is not None):
        owner = next(a for a in done if _token_of(a) == token)
        reply = await rpc.call(owner.token, "renew", {"token": token, "requestId": rid()})
        if reply["ok"] or reply["error"]["code"] not in ("stale", "conflict"):
            problems.append(f"a consumed lease token still answers {reply}")
    return problems, len(done)


async def crash_rounds(tmp_path: Path, *, speed: float, kills: int, acks_per_round: int) -> None:
    config = write_config(tmp_path)
    data, log = tmp_path / "data", tmp_path / "serve.log"
    load = Load(seed=kills * 1000 + int(speed))
    for _ in range(kills):
        served = start_serve(config, data, log, speed=speed)
        await load.drive(served.url, acks_per_round, kill=served.kill)
        assert served.process.returncode == -9
    served = start_serve(config, data, log, speed=speed)
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            problems, checked = await _verify(Rpc(client, served.url), load.acks)
    finally:
        assert served.stop() == 0
    assert problems == []
    assert checked >= kills * acks_per_round // 2
    assert {a.tool for a in load.acks if a.envelope["ok"]} >= {"start_run", "claim", "submit", "decide"}
    breaks, runs = check_store(data, OrgConfig.load(config))
    assert breaks == []
    assert runs >= len(set(load.runs))
    text = log.read_text()
    assert text.count(" serving http") == kills + 1
    assert "Traceback" not in text


@pytest.mark.parametrize("speed", [1, 60])
async def test_sigkill_under_load_loses_nothing_acknowledged(tmp_path: Path, speed: float) -> None:
    await crash_rounds(tmp_path, speed=speed, kills=3, acks_per_round=60)


@pytest.mark.soak
@pytest.mark.parametrize("speed", [1, 60])
async def test_many_sigkills_under_load_lose_nothing_acknowledged(tmp_path: Path, speed: float) -> None:
    await crash_rounds(tmp_path, speed=speed, kills=20, acks_per_round=150)


def test_the_load_driver_runs_without_a_server() -> None:
    """The driver's accounting: a call whose connection fails is not acknowledged."""
    load = Load(seed=1)

    async def nothing_listens() -> None:
        async with httpx.AsyncClient(timeout=1) as client:
            assert await load.write(Rpc(client, "http://127.0.0.1:9/mcp"), "t", "describe", {}) is None

    asyncio.run(nothing_listens())
    assert load.acks == []
