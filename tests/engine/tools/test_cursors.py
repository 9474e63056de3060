"""Paging cursors are the server's own (spec §4.3: a client retries `retry`, so a forged cursor must
never come back as one): any cursor the server did not issue is `invalid` with `cursor: not valid`."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.identity import Identity
from engine.keys import SECRETS_FILE
from tests.engine.engine_support import (
    MIRA,
    SCREENER,
    THREE_AGENTS,
    call,
    err,
    make_org,
    ok,
    publish,
    start,
)

pytestmark = pytest.mark.both_stores

NOT_VALID = ["cursor: not valid"]


def unsigned(value: Any) -> str:
    """A cursor as this server wrote them before they were signed: base64url JSON."""
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


FORGED = [
    unsigned([2**63]),
    unsigned([-(2**63) - 1]),
    unsigned([10**30]),
    unsigned([-1]),
    unsigned(["\ud800"]),
    unsigned(["2026-10-06T09:00:00.000000Z", 2**63, 0]),
    unsigned(["\ud800", 1, 1]),
    unsigned(["a"]),
    unsigned([5]),
    "",
    "garbage",
    "x" * 5000,
    "eyJ9.AAAA",
]
READS = [
    ("list_runs", MIRA),
    ("list_processes", MIRA),
    ("get_work", SCREENER),
    ("get_work", MIRA),
]


@pytest.mark.parametrize(("tool", "who"), READS, ids=[f"{t}-{w.kind}" for t, w in READS])
async def test_forged_cursors_are_invalid_never_retry(
    engine: Engine, tmp_path: Path, tool: str, who: Identity
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    await start(engine, "three-agents", {"ticket": "T-1"})
    for cursor in FORGED:
        reply = await call(engine, who, tool, cursor=cursor)
        err(reply, "invalid", NOT_VALID)


async def _two_pages(engine: Engine, tmp_path: Path) -> str:
    await publish(engine, tmp_path, THREE_AGENTS)
    for n in range(3):
        await start(engine, "three-agents", {"ticket": f"T-{n}"})
    page = ok(await call(engine, MIRA, "list_runs", limit=2), "list_runs")
    cursor: str = page["nextCursor"]
    assert cursor is not None
    return cursor


async def test_an_issued_cursor_pages_and_a_tampered_one_is_invalid(engine: Engine, tmp_path: Path) -> None:
    cursor = await _two_pages(engine, tmp_path)
    rest = ok(await call(engine, MIRA, "list_runs", limit=2, cursor=cursor), "list_runs")
    assert [item["inputs"]["ticket"] for item in rest["items"]] == ["T-0"]
    flipped = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    err(await call(engine, MIRA, "list_runs", limit=2, cursor=flipped), "invalid", NOT_VALID)
    mac = cursor.partition(".")[2]
    other = unsigned([1])
    err(await call(engine, MIRA, "list_runs", cursor=f"{other}.{mac}"), "invalid", NOT_VALID)


async def test_a_cursor_for_one_read_is_not_valid_for_another(engine: Engine, tmp_path: Path) -> None:
    cursor = await _two_pages(engine, tmp_path)
    err(await call(engine, SCREENER, "get_work", cursor=cursor), "invalid", NOT_VALID)
    err(await call(engine, MIRA, "list_processes", cursor=cursor), "invalid", NOT_VALID)


async def test_a_cursor_from_another_server_is_invalid(tmp_path: Path) -> None:
    one = await Engine.open(tmp_path / "one", make_org(), clock=ManualClock())
    two = await Engine.open(tmp_path / "two", make_org(), clock=ManualClock())
    try:
        cursor = await _two_pages(one, tmp_path / "p1")
        await _two_pages(two, tmp_path / "p2")
        err(await call(two, MIRA, "list_runs", limit=2, cursor=cursor), "invalid", NOT_VALID)
    finally:
        await one.close()
        await two.close()


async def test_a_lost_secrets_file_makes_old_cursors_invalid(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        cursor = await _two_pages(engine, tmp_path)
    finally:
        await engine.close()
    (data / SECRETS_FILE).unlink()
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        err(await call(engine, MIRA, "list_runs", limit=2, cursor=cursor), "invalid", NOT_VALID)
    finally:
        await engine.close()
