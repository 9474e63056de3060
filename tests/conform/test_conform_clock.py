"""The server's clock as the runner follows it, and the times it reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from conform.clock import ServerClock, parse_time


def test_the_server_clock_moves_from_the_latest_sample_at_the_declared_speed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr("conform.clock.time.monotonic", lambda: now[0])
    clock = ServerClock(speed=60)
    start = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
    clock.saw(start)
    now[0] += 2
    assert clock.now() == start + timedelta(minutes=2)
    clock.saw(start)
    assert clock.now() == start + timedelta(minutes=2)
    clock.saw_text("2030-01-01T10:00:00+01:00")
    assert clock.now() == start + timedelta(minutes=2)
    clock.saw_text("2030-01-01T09:05:00Z")
    assert clock.now() == start + timedelta(minutes=5)
    assert clock.real_seconds(120) == 2


def test_times_need_an_offset() -> None:
    assert parse_time("2026-10-06T11:00:00+02:00") == datetime(2026, 10, 6, 9, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_time("2026-10-06T11:00:00")
