"""Fixtures for engine tests: `clock` (a ManualClock) and `engine` (see engine_support.py)."""

from tests.engine.engine_support import clock, engine

__all__ = ["clock", "engine"]
