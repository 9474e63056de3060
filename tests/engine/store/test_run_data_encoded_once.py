"""A large output is encoded once for the run data's measures: the run-data cap counts the submitted
fields from the same text the record made of them is measured with (`records.text_of`), and the next
write on the run finds that record measured (the SQLite store hands it the same record objects)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.core import Engine
from engine.store import records, state
from tests.engine.engine_support import SCREENER, THREE_AGENTS, call, claim, ok, publish, start

BIG = "x" * 100_000


async def test_a_large_output_is_encoded_once_for_the_cap_and_the_snapshot(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    run_id = (await start(engine, "three-agents", {"ticket": "T-1"}))["run"]["id"]
    first = await claim(engine, run_id, "one")
    encoded: list[str] = []  # each text of the large output written to measure run data

    def counting(encode: Callable[[object], str]) -> Callable[[object], str]:
        def counted(value: object) -> str:
            text = encode(value)
            if BIG in text:
                encoded.append(text)
            return text

        return counted

    monkeypatch.setattr(records, "canonical", counting(records.canonical))
    monkeypatch.setattr(state, "counted", counting(records.counted))  # `data_bytes` uses it
    ok(
        await call(engine, SCREENER, "submit", token=first["token"], output={"note": BIG}, summary="s"),
        "submit",
    )
    second = await claim(engine, run_id, "two")
    done = await call(engine, SCREENER, "submit", token=second["token"], output={"note": "two"}, summary="s")
    assert ok(done, "submit")["data"]["steps"]["one"]["output"] == {"note": BIG}
    fields = '{"at":"2026-10-06T09:00:00Z","by":"a_screener","output":{"note":"' + BIG + '"},"summary":"s"}'
    assert encoded == [fields]  # for the cap; the record, and the snapshot later, from the same text
