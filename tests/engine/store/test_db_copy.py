"""`apc db copy --from sqlite:PATH --to postgresql://...`: an organization's data moves whole; the
engine on PostgreSQL then answers every read as it did on SQLite and goes on from there."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.clock import ManualClock
from engine.core import Engine
from engine.org import OrgConfig
from engine.store.state import clock_mark, stamp
from tests.engine.engine_support import MIRA, SCREENER, call, claim, make_org, ok, publish, start
from tests.engine.outbox.test_outbox import REVIEWED, TARGETS


def _org() -> OrgConfig:
    return make_org(notify=TARGETS)


async def _everything(engine: Engine) -> dict[str, Any]:
    runs = ok(await call(engine, MIRA, "list_runs", limit=100), "list_runs")["items"]
    return {
        "runs": runs,
        "views": [ok(await call(engine, MIRA, "get_run", runId=r["id"]), "get_run") for r in runs],
        "work": ok(await call(engine, MIRA, "get_work"), "get_work")["items"],
        "processes": ok(await call(engine, MIRA, "list_processes"), "list_processes")["items"],
        "notifications": await engine.notifications(),
        "deliveries": await engine.deliveries(),
        "server_time": await engine.store.server_time(),
        "counts": await engine.store.counts(),
    }


async def test_copy_moves_an_organization_to_postgresql(
    tmp_path: Path, pg_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    clock = ManualClock()
    engine = await Engine.open(data, _org(), clock=clock)
    try:
        await publish(engine, tmp_path, REVIEWED, {"reviewer": "g_finance"})
        run_ids = [(await start(engine, "reviewed", {}))["run"]["id"] for _ in range(3)]
        token = (await claim(engine, run_ids[0], "work"))["token"]
        upload = {
            "fileName": "r.txt",
            "contentType": "text/plain",
            "contentBase64": base64.b64encode(b"hi").decode(),
        }
        file_id = ok(await call(engine, SCREENER, "upload", **upload), "upload")["id"]
        ok(
            await call(engine, SCREENER, "submit", token=token, output={"note": "n"}, summary="s"),
            "submit",
        )
        clock.advance(minutes=5)
        before = await _everything(engine)
    finally:
        await engine.close()
    files = tmp_path / "shared-files"
    status = await asyncio.to_thread(
        main, ["db", "copy", "--from", f"sqlite:{data}", "--to", pg_database, "--files", str(files)]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "  runs: 3 rows\n" in out and "  files: 1 rows\n" in out

    org = replace(_org(), server=replace(_org().server, files=files))
    engine = await Engine.open(data, org, clock=clock, database=pg_database)
    try:
        after = await _everything(engine)
        # The SQLite engine recorded the time it reached when it closed (its mark); the copy resumes from it.
        assert after == {**before, "server_time": clock_mark(stamp(clock.now()))}
        assert (await engine.files.open(file_id)) is not None
        fourth = (await start(engine, "reviewed", {}))["run"]["id"]
        listed = ok(await call(engine, MIRA, "list_runs", limit=100), "list_runs")["items"]
        assert [r["id"] for r in listed] == [fourth, *[r["id"] for r in before["runs"]]]
    finally:
        await engine.close()

    again = await asyncio.to_thread(main, ["db", "copy", "--from", f"sqlite:{data}", "--to", pg_database])
    assert again == 1
    assert capsys.readouterr().err == (
        "apc db copy: the target database already holds runs: copy only into an empty one\n"
    )
