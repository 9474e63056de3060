"""A ServerClock a presenter steers: paused, server time stands still whatever real time does; resumed,
it goes on from where it stood; a new speed applies from now on; never a step backwards, at speed 1
too (a steered clock no longer catches up with wall time, or the pause would be undone)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from engine.clock import ServerClock
from tests.engine.test_server_clock import T0, Fake, clock


def test_paused_time_stands_still_and_resumes_from_where_it_stood() -> None:
    fake = Fake()
    c = clock(fake, 60)
    fake.sleep(10)
    assert c.now() == T0 + timedelta(minutes=10)
    c.pause()
    assert c.paused is True
    fake.sleep(3600)
    assert c.now() == T0 + timedelta(minutes=10)
    c.pause()
    assert c.now() == T0 + timedelta(minutes=10), "pausing twice changes nothing"
    c.resume()
    assert (c.paused, c.now()) == (False, T0 + timedelta(minutes=10))
    fake.sleep(1)
    assert c.now() == T0 + timedelta(minutes=11)


def test_a_new_speed_applies_from_now_on() -> None:
    fake = Fake()
    c = clock(fake, 60)
    fake.sleep(1)
    c.set_speed(120)
    assert (c.speed, c.now()) == (120, T0 + timedelta(minutes=1))
    fake.sleep(1)
    assert c.now() == T0 + timedelta(minutes=3)
    c.pause()
    c.set_speed(30)
    fake.sleep(5)
    assert c.now() == T0 + timedelta(minutes=3), "a paused clock changes speed and stays paused"
    c.resume()
    fake.sleep(2)
    assert c.now() == T0 + timedelta(minutes=4)
    with pytest.raises(ValueError, match="speed must be positive"):
        c.set_speed(0)


def test_at_speed_one_a_pause_holds_once_the_clock_is_steered() -> None:
    fake = Fake()
    c = clock(fake, 1)
    fake.sleep(30)
    assert c.now() == T0 + timedelta(seconds=30), "unsteered: wall time"
    c.pause()
    fake.sleep(600)
    c.resume()
    assert c.now() == T0 + timedelta(seconds=30), "not the wall time: the pause holds"
    fake.sleep(5)
    assert c.now() == T0 + timedelta(seconds=35)


def test_a_reading_on_another_thread_while_resuming_never_jumps_by_the_pause() -> None:
    """The demo resumes on the engine's thread while the console reads the clock on its own."""
    fake = Fake()
    hooks: list[Callable[[], None]] = []

    def monotonic() -> float:
        while hooks:
            hooks.pop()()
        return fake.monotonic()

    c = ServerClock(60, None, wall=fake.wall, monotonic=monotonic)
    c.pause()
    fake.sleep(100)  # 100 s paused: 100 minutes at 60x, which a reading must not skip
    read: list[datetime] = []
    reader = threading.Thread(target=lambda: read.append(c.now()))

    def another_thread_reads() -> None:
        reader.start()
        reader.join(0.2)  # it waits for resume to finish (it would read a jumped time at once otherwise)

    hooks.append(another_thread_reads)  # run by the first monotonic() of resume's rebase
    c.resume()
    reader.join()
    assert read == [T0]
    assert c.now() == T0
