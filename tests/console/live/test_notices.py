"""Notices without the storm: a status line and an activity log, grouped, never over a dialog; a
repeating error shown once with a count and a hint; the engine's log kept off the screen."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from console.client import failure
from console.client.local import LocalClient
from console.embedded.launch import delivery_line
from console.live.notices import ActivityFeed, NoticeLog, route_engine_log
from console.modals.decide import DecideDialog
from engine.clock import ManualClock
from engine.core import Engine
from engine.store.base import AttemptResult, Delivery, DeliveryState
from engine.store.state import Notification
from tests.console.console_support import OPS, Agent, make_app, press, settle, shown

T0 = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


def test_notices_of_one_group_close_together_are_one_entry() -> None:
    log = NoticeLog()
    log.add(T0, "New work: approve approve · screening · r_1", group="new work items")
    assert log.latest is not None and log.latest.line == "New work: approve approve · screening · r_1"
    log.add(T0 + timedelta(seconds=2), "3 new work items", group="new work items", count=3)
    log.add(T0 + timedelta(seconds=4), "New work: …", group="new work items")
    assert [e.line for e in log.entries] == ["5 new work items"]
    log.add(T0 + timedelta(seconds=60), "New work: task x · p · r_9", group="new work items")
    assert [e.line for e in log.entries] == ["5 new work items", "New work: task x · p · r_9"]
    log.add(T0 + timedelta(seconds=61), "Saved 3 bytes to /tmp/x")
    log.add(T0 + timedelta(seconds=62), "Saved 3 bytes to /tmp/x")
    assert len(log.entries) == 4


def test_a_group_gathers_across_refreshes_with_other_notices_between() -> None:
    log = NoticeLog()
    log.add(T0, "New work: approve approve · screening · r_1", group="new work items")
    log.add(T0 + timedelta(seconds=2), "Run r_2 ended: onboarded (screening)", group="runs ended")
    log.add(T0 + timedelta(seconds=4), "New work: task fill_form · intake · r_3", group="new work items")
    log.add(T0 + timedelta(seconds=6), "2 runs ended (rejected, cancelled)", group="runs ended", count=2)
    assert [e.line for e in log.entries] == ["2 new work items", "3 runs ended"]


async def test_runs_that_end_over_several_refreshes_are_one_notice(
    client: LocalClient, agent: Agent, clock: ManualClock, engine: Engine
) -> None:
    runs = [await agent.start("screening", {"vendorName": name}) for name in ("A", "B", "C")]
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await press(pilot, "2")
        for number, run_id in enumerate(runs):
            await engine.call(OPS, "cancel", {"runId": run_id, "reason": "Gone.", "requestId": f"c-{number}"})
            clock.advance(seconds=2)
            await app.reload_all(full=False)
            await settle(pilot)
            expected = f"Run {run_id} cancelled (screening)" if number == 0 else f"{number + 1} runs ended"
            assert shown(app, "#notice") == expected
        assert app.notices.entries[-1].count == 3


async def test_runs_that_end_are_told_while_the_runs_tab_was_never_built(
    client: LocalClient, agent: Agent, clock: ManualClock, engine: Engine
) -> None:
    runs = [await agent.start("screening", {"vendorName": name}) for name in ("A", "B")]
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await app.workers.wait_for_complete()  # the runs list's first page, read after the first screen
        assert app.lists.runs.started and not app.main.built("runs")
        for number, run_id in enumerate(runs):
            await engine.call(OPS, "cancel", {"runId": run_id, "reason": "Gone.", "requestId": f"c-{number}"})
        await app.reload_all()
        await settle(pilot)
        assert shown(app, "#notice") == "2 runs ended"
        assert not app.main.built("runs")
        await press(pilot, "2")
        assert app.main.runs.table.keys == list(reversed(runs))


def test_live_news_does_not_push_an_answer_off_the_status_line_for_a_few_seconds() -> None:
    log = NoticeLog()
    log.add(T0, "r_1 cancelled", moment=100.0)
    log.add(T0, "New work: task fill_form · intake · r_3", group="new work items", live=True, moment=102.0)
    assert log.latest is not None and log.latest.line == "r_1 cancelled"
    assert [e.line for e in log.entries][-1] == "New work: task fill_form · intake · r_3"
    log.add(T0, "Run r_2 ended (screening)", group="runs ended", live=True, moment=109.0)
    assert log.latest is not None and log.latest.line == "Run r_2 ended (screening)"


def test_groups_go_by_real_seconds_not_by_a_demos_fast_clock() -> None:
    log = NoticeLog()
    for tick in range(3):
        log.add(T0 + timedelta(minutes=3 * tick), "New work: …", group="new work items", moment=2.0 * tick)
    assert [e.line for e in log.entries] == ["3 new work items"]


def test_a_repeating_error_is_one_entry_with_a_count_and_a_hint() -> None:
    log = NoticeLog()
    for second in range(0, 10, 2):
        log.error(T0 + timedelta(seconds=second), "work queue", "retry", "connection refused")
    log.add(T0 + timedelta(seconds=11), "Live refresh paused")
    log.error(T0 + timedelta(seconds=12), "work queue", "retry", "connection refused")
    assert [e.line for e in log.entries] == [
        "Live refresh paused",
        "work queue: retry: connection refused (6 times) · is the server running? r retries now",
    ]


async def test_the_status_line_and_activity_log_replace_toasts(
    client: LocalClient, agent: Agent, clock: ManualClock
) -> None:
    first = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(first)
    app = make_app(client, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await press(pilot, "enter")
        assert isinstance(app.screen, DecideDialog)
        for name in ("B", "C"):
            await agent.screen(await agent.start("screening", {"vendorName": name}))
            await app.reload_all()
        answer = failure("retry", "connection refused")
        for _ in range(3):
            app.report_error("runs", answer)
        assert not app.screen.query("#notice")
        assert not app._notifications
        await press(pilot, "escape", "5")
        assert shown(app, "#notice") == (
            "runs: retry: connection refused (3 times) · is the server running? r retries now"
        )
        log = shown(app, "#activity-text").splitlines()
        assert [line[9:] for line in log] == [
            "runs: retry: connection refused (3 times) · is the server running? r retries now",
            "2 new work items",
        ]
        assert app.toasts.count("runs: retry: connection refused") == 1


def test_the_engines_log_goes_to_the_activity_feed_not_the_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    feed = ActivityFeed()
    undo = route_engine_log(feed)
    heard: list[tuple[str, str]] = []
    try:
        logging.getLogger("engine.outbox").error("claiming notifications failed")
        logging.getLogger("engine.outbox").warning("notification new_work n_1 to http://x failed (attempt 1)")
        feed.listen(lambda text, severity: heard.append((text, severity)))
        logging.getLogger("engine.tools").warning("tool claim slow")
    finally:
        undo()
    assert heard == [
        ("engine.outbox: claiming notifications failed", "error"),
        ("engine.tools: tool claim slow", "warning"),
    ]
    assert capsys.readouterr().err == ""


def test_each_delivery_attempt_is_one_line_of_the_activity_log() -> None:
    note = Notification("n_1", "run_ended", "r_1", "screening", None, (), "2026-10-06T09:00:00Z", False)

    def attempt(state: DeliveryState, attempts: int) -> Delivery:
        return Delivery(1, note, "https://hooks.example.com/x", state, attempts, None, None, None, None)

    hook = "notification run_ended to https://hooks.example.com/x"
    assert delivery_line(attempt("delivered", 1), AttemptResult("delivered", "2026-10-06T09:00:01Z")) == (
        f"{hook}: delivered",
        "information",
    )
    failed = AttemptResult("pending", "2026-10-06T09:00:01Z", "HTTP 503", "2026-10-06T09:01:00Z")
    assert delivery_line(attempt("pending", 2), failed) == (
        f"{hook}: attempt 2 failed (HTTP 503); retried later",
        "warning",
    )
    gave_up = AttemptResult("given_up", "2026-10-06T10:00:00Z", "HTTP 410")
    assert delivery_line(attempt("given_up", 8), gave_up) == (
        f"{hook}: given up after 8 attempts (HTTP 410)",
        "error",
    )
