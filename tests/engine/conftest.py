"""Fixtures for engine tests: `clock` (a ManualClock) and `engine` (see engine_support.py)."""

from engine_support import clock, engine

__all__ = ["clock", "engine"]
