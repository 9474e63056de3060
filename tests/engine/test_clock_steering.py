"""A ServerClock a presenter steers: paused, server time stands still whatever real time does; resumed,
it goes on from where it stood; a new speed applies from now on; never a step backwards, at speed 1
too (a steered clock no longer catches up with wall time, or the pause would be undone)."""

from __future__ import annotations

from datetime import timedelta

import pytest

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
