"""Spec §6 rule 2 through `engine.call`: leases, renew, stale and unverifiable tokens, handoff."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.keys import SECRETS_FILE, ServerKeys
from engine.tools.leases import NONCE_BYTES, Leases
from tests.engine.engine_support import (
    MIRA,
    OTHER_AGENT,
    SCREENER,
    THREE_AGENTS,
    call,
    claim,
    claim_as_before,
    err,
    indexed_tokens,
    make_org,
    ok,
    publish,
    start,
    step_states,
)

pytestmark = pytest.mark.both_stores


async def _run(engine: Engine, tmp_path: Path) -> str:
    await publish(engine, tmp_path, THREE_AGENTS)
    return (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]


async def test_renew_replaces_the_token_at_once_and_keeps_progress(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id = await _run(engine, tmp_path)
    old = (await claim(engine, run_id, "one"))["token"]
    clock.advance(300)
    renewed = ok(await call(engine, SCREENER, "renew", token=old, progress="Half the lists done."), "renew")
    assert renewed["expiresAt"] == "2026-10-06T09:15:00Z"
    assert renewed["token"] != old
    err(await call(engine, SCREENER, "renew", token=old), "stale")
    err(await call(engine, SCREENER, "submit", token=old, output={"note": "n"}, summary="s"), "stale")
    clock.advance(400)
    view = ok(
        await call(engine, SCREENER, "submit", token=renewed["token"], output={"note": "n"}, summary="s"),
        "submit",
    )
    assert step_states(view)["one"] == "done"
    assert view["data"]["steps"]["one"]["at"] == "2026-10-06T09:11:40Z"


async def test_an_ended_lease_makes_the_step_claimable_with_the_progress_handed_off(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    ok(await call(engine, SCREENER, "renew", token=token, progress="Found the vendor file."), "renew")
    assert ok(await call(engine, OTHER_AGENT, "get_work"), "get_work")["items"] == []
    clock.advance(seconds=600)
    [item] = ok(await call(engine, OTHER_AGENT, "get_work"), "get_work")["items"]
    assert (item["readySince"], item["handoff"]) == (
        "2026-10-06T09:10:00Z",
        {"progress": "Found the vendor file."},
    )
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert step_states(view)["one"] == "ready"
    data = await claim(engine, run_id, "one", who=OTHER_AGENT)
    assert data["handoff"] == {"progress": "Found the vendor file."}
    assert data["expiresAt"] == "2026-10-06T09:20:00Z"


async def test_tokens_after_the_lease_are_stale_and_unknown_tokens_invalid(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    clock.advance(600)
    err(await call(engine, SCREENER, "renew", token=token), "stale")
    err(await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "stale")
    err(await call(engine, SCREENER, "escalate", token=token, note="n"), "stale")
    err(
        await call(engine, SCREENER, "submit", token="forged", output={}, summary="s"),
        "invalid",
        ["token: not valid"],
    )
    err(await call(engine, SCREENER, "renew", token=token + "x"), "invalid", ["token: not valid"])


async def test_another_agent_cannot_use_a_token_it_was_not_given(engine: Engine, tmp_path: Path) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    err(
        await call(engine, OTHER_AGENT, "submit", token=token, output={"note": "n"}, summary="s"), "forbidden"
    )


async def test_handoff_is_null_on_a_first_attempt(engine: Engine, tmp_path: Path) -> None:
    run_id = await _run(engine, tmp_path)
    [item] = ok(await call(engine, SCREENER, "get_work"), "get_work")["items"]
    assert item["handoff"] is None
    assert (await claim(engine, run_id, "one"))["handoff"] is None


def _for_run(token: str, run_id: str) -> str:
    """`token` with the run id it names swapped for `run_id`, its tag kept."""
    body, tag = token.split(".")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    step_id = raw[NONCE_BYTES:].decode().split("\n")[1]
    swapped = raw[:NONCE_BYTES] + f"{run_id}\n{step_id}".encode()
    return base64.urlsafe_b64encode(swapped).decode().rstrip("=") + "." + tag


async def test_a_token_is_short_url_safe_text_naming_its_run_and_step_under_a_tag(
    engine: Engine, tmp_path: Path
) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{51}\.[A-Za-z0-9_-]{22}", token), token
    assert _for_run(token, run_id) == token


async def test_a_forged_or_foreign_token_is_invalid_and_the_real_one_still_works(
    engine: Engine, tmp_path: Path
) -> None:
    run_id = await _run(engine, tmp_path)
    other = (await start(engine, "three-agents", {"ticket": "B"}))["run"]["id"]
    token = (await claim(engine, run_id, "one"))["token"]
    body, tag = token.split(".")
    forged = [
        f"{body}.{'B' if tag[0] == 'A' else 'A'}{tag[1:]}",
        _for_run(token, other),
        f"{body}.",
        body,
        Leases(ServerKeys.generate().lease).issue(run_id, "one"),
    ]
    for fake in forged:
        assert fake != token
        err(
            await call(engine, SCREENER, "submit", token=fake, output={"note": "n"}, summary="s"),
            "invalid",
            ["token: not valid"],
        )
        err(await call(engine, SCREENER, "renew", token=fake), "invalid", ["token: not valid"])
    view = ok(
        await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"), "submit"
    )
    assert step_states(view)["one"] == "done"


async def test_a_signed_token_for_a_run_or_step_this_database_does_not_hold_is_invalid(
    engine: Engine, tmp_path: Path
) -> None:
    # Signed with this server's key (another organization on the same secrets file, or a database restored
    # from before the claim): it verifies, yet names nothing here.
    run_id = await _run(engine, tmp_path)
    leases = engine.ctx.leases
    for fake in (leases.issue("r_00000000000000000000", "one"), leases.issue(run_id, "no_such_step")):
        err(
            await call(engine, SCREENER, "submit", token=fake, output={"note": "n"}, summary="s"),
            "invalid",
            ["token: not valid"],
        )
        err(await call(engine, SCREENER, "renew", token=fake), "invalid", ["token: not valid"])


async def test_claims_and_renews_index_no_token(engine: Engine, tmp_path: Path) -> None:
    run_id = await _run(engine, tmp_path)
    token = (await claim(engine, run_id, "one"))["token"]
    ok(await call(engine, SCREENER, "renew", token=token), "renew")
    assert await indexed_tokens(engine) == 0


async def test_a_replayed_claim_returns_the_same_token_and_it_submits(engine: Engine, tmp_path: Path) -> None:
    run_id = await _run(engine, tmp_path)
    first = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1"), "claim")
    again = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="one", requestId="c1"), "claim")
    assert again["token"] == first["token"]
    view = ok(
        await call(engine, SCREENER, "submit", token=again["token"], output={"note": "n"}, summary="s"),
        "submit",
    )
    assert step_states(view)["one"] == "done"


async def test_a_token_from_before_signed_tokens_still_submits(engine: Engine, tmp_path: Path) -> None:
    run_id = await _run(engine, tmp_path)
    old = await claim_as_before(engine, run_id, "one")
    assert (len(old), await indexed_tokens(engine)) == (43, 1)
    err(await call(engine, OTHER_AGENT, "submit", token=old, output={"note": "n"}, summary="s"), "forbidden")
    view = ok(await call(engine, SCREENER, "submit", token=old, output={"note": "n"}, summary="s"), "submit")
    assert step_states(view)["one"] == "done"
    err(await call(engine, SCREENER, "renew", token=old), "stale")


async def test_a_token_from_before_renews_into_a_signed_one_and_is_then_stale(
    engine: Engine, tmp_path: Path
) -> None:
    run_id = await _run(engine, tmp_path)
    old = await claim_as_before(engine, run_id, "one")
    renewed = ok(await call(engine, SCREENER, "renew", token=old), "renew")["token"]
    assert "." in renewed
    err(await call(engine, SCREENER, "submit", token=old, output={"note": "n"}, summary="s"), "stale")
    err(await call(engine, SCREENER, "renew", token=old), "stale")
    view = ok(
        await call(engine, SCREENER, "submit", token=renewed, output={"note": "n"}, summary="s"), "submit"
    )
    assert step_states(view)["one"] == "done"
    assert await indexed_tokens(engine) == 1


async def test_a_token_outlives_a_restart_with_the_secrets_file_and_is_invalid_without_it(
    tmp_path: Path, clock: ManualClock, store_kind: str, request: pytest.FixtureRequest
) -> None:
    database = request.getfixturevalue("pg_database") if store_kind == "postgresql" else None
    data = tmp_path / "data"

    async def opened() -> Engine:
        return await Engine.open(data, make_org(), clock=clock, database=database)

    engine = await opened()
    try:
        run_id = await _run(engine, tmp_path)
        token = (await claim(engine, run_id, "one"))["token"]
    finally:
        await engine.close()
    engine = await opened()
    try:
        token = ok(await call(engine, SCREENER, "renew", token=token), "renew")["token"]
    finally:
        await engine.close()
    (data / SECRETS_FILE).unlink()
    engine = await opened()
    try:
        err(
            await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"),
            "invalid",
            ["token: not valid"],
        )
        view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
        assert step_states(view)["one"] == "claimed"
    finally:
        await engine.close()
