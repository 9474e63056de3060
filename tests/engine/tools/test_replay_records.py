"""The recorded results of `claim` and `renew` carry live lease tokens (a replay must return them,
tools.md `claim`), so they are kept encrypted with the replay key from the secrets file: a copy of
`engine.db` alone hands out no lease, and without the secrets file a replay answers `conflict`."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.keys import SECRETS_FILE
from tests.engine.engine_support import SCREENER, THREE_AGENTS, call, err, make_org, ok, publish, start

pytestmark = pytest.mark.both_stores


def _stored(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(data.glob("engine.db*")))


async def test_lease_tokens_never_reach_the_database_in_the_clear(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
        claimed = ok(
            await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1"), "claim"
        )
        renewed = ok(await call(engine, SCREENER, "renew", token=claimed["token"], requestId="r1"), "renew")
        replayed = await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1")
        assert ok(replayed, "claim") == claimed
        assert (
            ok(await call(engine, SCREENER, "renew", token=claimed["token"], requestId="r1"), "renew")
            == renewed
        )
    finally:
        await engine.close()
    stored = _stored(data)
    for token in (claimed["token"], renewed["token"]):
        assert token.encode() not in stored


async def test_replays_answer_the_same_after_a_restart_with_the_same_secrets(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
        claimed = await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1")
    finally:
        await engine.close()
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        assert await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1") == claimed
    finally:
        await engine.close()


async def test_without_the_secrets_file_a_replayed_claim_is_a_conflict_and_other_replays_still_work(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        await publish(engine, tmp_path, THREE_AGENTS)
        started = await call(
            engine, SCREENER, "start_run", process="three-agents", inputs={"ticket": "T-1"}, requestId="s1"
        )
        run_id = started["data"]["run"]["id"]
        claimed = ok(
            await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1"), "claim"
        )
    finally:
        await engine.close()
    (data / SECRETS_FILE).unlink()
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        replay = await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1")
        error = err(replay, "conflict", ["requestId: already used"])
        assert claimed["token"] not in str(error)
        again = await call(
            engine, SCREENER, "start_run", process="three-agents", inputs={"ticket": "T-1"}, requestId="s1"
        )
        assert again == started
    finally:
        await engine.close()


async def test_a_large_result_is_recorded_deflated_and_replayed_exactly(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    big = "the same words again " * 10_000
    token = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="one"), "claim")["token"]
    submitted = await call(
        engine, SCREENER, "submit", token=token, output={"note": big}, summary="s", requestId="u1"
    )
    ok(submitted, "submit")
    claimed = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="two", requestId="c2"), "claim")
    assert claimed["data"]["steps"]["one"]["output"]["note"] == big
    for tool, kept in (("submit", "u1"), ("claim", "c2")):
        record = await engine.store.get_request(kept)
        assert record is not None and len(record.result) < len(big) // 10, tool
    replayed = await call(
        engine, SCREENER, "submit", token=token, output={"note": big}, summary="s", requestId="u1"
    )
    assert replayed == submitted
    again = await call(engine, SCREENER, "claim", runId=run_id, stepId="two", requestId="c2")
    assert ok(again, "claim") == claimed
