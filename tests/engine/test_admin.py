"""The admin side an embedding console uses: an injected id source, and a published version's text."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import SCREENER, SCREENING, call, make_org, ok, publish

pytestmark = pytest.mark.both_stores


async def test_run_work_item_file_and_notification_ids_come_from_the_injected_source(
    tmp_path: Path, clock: ManualClock
) -> None:
    asked: list[str] = []
    numbers = itertools.count(1)

    def ids(prefix: str) -> str:
        asked.append(prefix)
        return f"{prefix}_test{next(numbers)}"

    engine = await Engine.open(tmp_path / "data", make_org(), clock=clock, ids=ids)
    try:
        await publish(engine, tmp_path, SCREENING, {"finance-approver": "g_finance"})
        view = ok(
            await call(engine, SCREENER, "start_run", process="screening", inputs={"vendorName": "Acme"}),
            "start_run",
        )
        upload = ok(
            await call(
                engine, SCREENER, "upload", fileName="r.txt", contentType="text/plain", contentBase64="eA=="
            ),
            "upload",
        )
        run_id = view["run"]["id"]
        token = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="check_vendor"), "claim")[
            "token"
        ]
        ok(await call(engine, SCREENER, "escalate", token=token, note="Portal down."), "escalate")
        escalated = ok(await call(engine, SCREENER, "get_run", runId=run_id), "get_run")
        notes = await engine.notifications(run_id)
    finally:
        await engine.close()
    assert (view["run"]["id"], upload["id"], [i["id"] for i in escalated["workItems"]]) == (
        "r_test1",
        "f_test2",
        ["w_test3"],
    )
    assert [(n.id, n.kind) for n in notes] == [("n_test4", "escalation")]
    assert asked == ["r", "f", "w", "n"]


async def test_process_text_is_the_published_version_or_none(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, SCREENING, {"finance-approver": "g_finance"})
    assert await engine.process_text("screening", 1) == textwrap.dedent(SCREENING).lstrip("\n")
    assert await engine.process_text("screening", 2) is None
    assert await engine.process_text("nothing", 1) is None
