"""Columns use the width: content-sized columns, the text column takes the rest, the assignee and the
dates go first when room is short, and run ids shorten to a prefix unique among the rows loaded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from console.panes import runs, work
from console.views.format import short_id, unique_prefix
from console.widgets.columns import fit_widths
from engine.clock import ManualClock
from engine.ids import IdSource
from tests.console.console_support import Agent, cells, make_app, make_client, open_engine, press

NEED = {"kind": 10, "process": 11, "run": 9, "step": 12, "assigned": 16}


def test_the_text_column_takes_the_rest_and_short_of_room_the_assignee_then_the_age_go() -> None:
    assert fit_widths(work.COLUMNS, 218, NEED) == [2, 10, 11, 9, 12, 4, 9, 16, 127]
    assert fit_widths(work.COLUMNS, 158, NEED) == [2, 10, 11, 9, 12, 4, 9, 16, 67]
    assert fit_widths(work.COLUMNS, 78, NEED) == [2, 10, 10, 9, 10, 0, 7, 0, 16]


def test_long_names_are_capped_then_squeezed_widest_first_down_to_their_least() -> None:
    wide = {**NEED, "process": 60, "run": 13, "step": 40}
    assert fit_widths(work.COLUMNS, 218, wide) == [2, 10, 32, 13, 32, 4, 9, 16, 82]
    narrow = fit_widths(work.COLUMNS, 78, wide)
    assert narrow == [2, 10, 10, 13, 10, 0, 7, 0, 16]
    assert sum(w + 2 for w in narrow if w) == 82, "below every least width the table scrolls sideways"


def test_runs_drop_updated_then_started_when_room_is_short() -> None:
    need = {"run": 7, "process": 15, "outcome": 8}
    assert fit_widths(runs.COLUMNS, 158, need) == [1, 7, 15, 3, 9, 8, 16, 16, 65]
    assert fit_widths(runs.COLUMNS, 78, need) == [1, 7, 15, 3, 9, 8, 0, 0, 21]
    assert fit_widths(runs.COLUMNS, 72, need) == [1, 7, 15, 0, 9, 8, 0, 0, 20]


def test_run_ids_shorten_to_a_prefix_no_two_loaded_runs_share() -> None:
    assert unique_prefix([]) == 6
    assert unique_prefix(["r_7d64aa", "r_81f0bb"]) == 6
    ids = ["r_7d6401ffffffff", "r_7d6402ffffffff", "r_9a0000000000"]
    assert unique_prefix(ids) == 8
    assert [short_id(i, 8) for i in ids] == ["r_7d6401…", "r_7d6402…", "r_9a0000…"]
    assert unique_prefix(["r_1", "r_12"]) == 6
    assert short_id("r_12", 6) == "r_12"


def shared_prefix_ids() -> IdSource:
    """Run ids that agree on their first seven characters: `r_7d6401ffffffff`, `r_7d6402ffffffff`, …"""
    counters: dict[str, Iterator[int]] = {}

    def next_id(prefix: str) -> str:
        counter = counters.setdefault(prefix, iter(range(1, 100)))
        return f"{prefix}_7d64{next(counter):02d}{'f' * 8}"

    return next_id


async def test_the_queue_at_80_160_and_220_columns(tmp_path: Path) -> None:
    clock = ManualClock()
    engine = await open_engine(tmp_path, clock, ids=shared_prefix_ids())
    try:
        agent = Agent(engine)
        approval = await agent.start("screening", {"vendorName": "Acme"})
        await agent.screen(approval)
        asked = await agent.start("review-pair", {"contract": "C-7"})
        app = make_app(make_client(engine), clock)
        async with app.run_test(size=(220, 60)) as pilot:
            await app.ready.wait()
            table = app.main.work.table
            header = table.render_line(0).text.rstrip()
            assert header == (
                "     Kind     Process      Run        Step     Age   Due        Assigned          Text"
            )
            assert table.widths[-1] == 218 - sum(w + 2 for w in table.widths[:-1]) - 2
            runs_shown = {cells(table, key)[3].plain for key in table.keys}
            assert runs_shown == {short_id(approval, 8), short_id(asked, 8)} == {"r_7d6401…", "r_7d6402…"}
            row = table.render_line(1).text
            assert "Approve when the vendor is cleared and the spend is justified." in row
            await pilot.resize_terminal(160, 48)
            await press(pilot, "r")
            assert table.render_line(0).text.rstrip() == header
            await pilot.resize_terminal(80, 24)
            await press(pilot, "r")
            assert table.render_line(0).text.rstrip() == (
                "     Kind     Process      Run        Step     Due        Text"
            )
            assert table.virtual_size.width == 78, "no sideways scrolling at 80 columns"
    finally:
        await engine.close()
