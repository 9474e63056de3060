"""A repeat of a requestId is the same call when its arguments are the same JSON (RFC 8785: `1` and
`1.0` are one number) once an omitted argument reads as its default; anything else is `conflict`
(spec §4). A record written with the fingerprint of before still answers its repeat."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from engine.core import Engine
from engine.store.base import Transaction
from engine.store.postgres import PostgresTransaction
from engine.store.sqlite import SqliteTransaction
from tests.engine.engine_support import MIRA, SCREENER, call, claim, err, ok, publish

pytestmark = pytest.mark.both_stores

AMOUNTS = """
---
name: amounts
description: An amount and its parts in, their total out.
inputs:
  amount: number
  parts: { type: list, items: number }
  meta: object
steps:
  - id: total
    agent: Add them up.
    output: { total: number, parts: { type: list, items: number } }
  - id: done
    finish: done
---
"""

INPUTS = {"amount": 1, "parts": [2, 0.5, -0.0], "meta": {"n": 100, "deep": [{"x": 3}]}}
SPELLED = {"amount": 1.0, "parts": [2.0, 0.5, 0], "meta": {"deep": [{"x": 3.0}], "n": 1e2}}
"""The same JSON as INPUTS, each number as another client's JSON library might write it."""


async def _runs(engine: Engine) -> int:
    return len(ok(await call(engine, MIRA, "list_runs"), "list_runs")["items"])


async def test_a_repeat_that_spells_its_numbers_otherwise_gets_the_original_result(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, AMOUNTS)
    first = ok(
        await call(
            engine, SCREENER, "start_run", process="amounts", version=1, inputs=INPUTS, requestId="s1"
        ),
        "start_run",
    )
    again = await call(
        engine,
        SCREENER,
        "start_run",
        process="amounts",
        version=1.0,
        inputs=SPELLED,
        mode="live",
        requestId="s1",
    )
    assert ok(again, "start_run") == first
    assert await _runs(engine) == 1

    token = (await claim(engine, first["run"]["id"], "total"))["token"]
    output: dict[str, Any] = {"total": 3.5, "parts": [1, 2]}
    submitted = await call(
        engine, SCREENER, "submit", token=token, output=output, summary="s", requestId="u1"
    )
    view = ok(submitted, "submit")
    assert view["data"]["steps"]["total"]["output"] == output
    respelled = {"parts": [1.0, 2e0], "total": 3.50}
    again = await call(engine, SCREENER, "submit", token=token, output=respelled, summary="s", requestId="u1")
    assert again == submitted


@pytest.mark.parametrize(
    ("changed", "value"),
    [("inputs", {**INPUTS, "amount": 1.5}), ("inputs", {**INPUTS, "parts": [2, 0.5]}), ("mode", "test")],
    ids=["another-number", "another-list", "another-mode"],
)
async def test_a_repeat_with_other_arguments_is_still_a_conflict(
    engine: Engine, tmp_path: Path, changed: str, value: Any
) -> None:
    await publish(engine, tmp_path, AMOUNTS)
    ok(
        await call(engine, SCREENER, "start_run", process="amounts", inputs=INPUTS, requestId="s1"),
        "start_run",
    )
    arguments: dict[str, Any] = {"process": "amounts", "inputs": INPUTS, changed: value}
    err(
        await call(engine, SCREENER, "start_run", **arguments, requestId="s1"),
        "conflict",
        ["requestId: already used"],
    )
    assert await _runs(engine) == 1


def _fingerprint_of_before(tool: str, arguments: dict[str, Any]) -> str:
    """What a server of before recorded: SHA-256 of [tool, arguments without requestId] as sorted,
    compact JSON, numbers as sent."""
    text = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


async def _record_as_before(engine: Engine, request_id: str, args_hash: str) -> None:
    async def rewrite(tx: Transaction) -> None:
        if isinstance(tx, SqliteTransaction):
            tx.connection.execute(
                "UPDATE requests SET args_hash = ? WHERE request_id = ?", (args_hash, request_id)
            )
        else:
            assert isinstance(tx, PostgresTransaction)
            sql = "UPDATE requests SET args_hash = %s WHERE request_id = %s"
            await tx._c.execute(sql, (args_hash, request_id))

    await engine.store.write(rewrite)


async def test_a_record_written_before_still_answers_the_same_call(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, AMOUNTS)
    arguments = {"process": "amounts", "inputs": SPELLED}
    first = ok(await call(engine, SCREENER, "start_run", **arguments, requestId="s1"), "start_run")
    await _record_as_before(engine, "s1", _fingerprint_of_before("start_run", arguments))
    record = await engine.store.get_request("s1")
    assert record is not None and record.args_hash == _fingerprint_of_before("start_run", arguments)

    assert ok(await call(engine, SCREENER, "start_run", **arguments, requestId="s1"), "start_run") == first
    other = {"process": "amounts", "inputs": {**SPELLED, "amount": 2}}
    err(
        await call(engine, SCREENER, "start_run", **other, requestId="s1"),
        "conflict",
        ["requestId: already used"],
    )
    assert await _runs(engine) == 1
