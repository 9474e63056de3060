"""A process serving writes collects its youngest generation less often, never more often."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from engine import core


@pytest.fixture
def threshold() -> Iterator[None]:
    kept = gc.get_threshold()
    yield
    gc.set_threshold(*kept)


@pytest.mark.usefixtures("threshold")
def test_python_default_is_raised_and_the_older_generations_kept() -> None:
    gc.set_threshold(700, 10, 10)
    core.collect_less()
    assert gc.get_threshold() == (core.YOUNG_OBJECTS, 10, 10)


@pytest.mark.usefixtures("threshold")
def test_a_higher_threshold_set_by_the_host_is_left_alone() -> None:
    gc.set_threshold(core.YOUNG_OBJECTS * 5, 20, 30)
    core.collect_less()
    assert gc.get_threshold() == (core.YOUNG_OBJECTS * 5, 20, 30)
