"""Fixtures for engine tests: `engine` (see engine_support.py), on the `clock` of tests/conftest.py."""

from tests.engine.engine_support import engine

__all__ = ["engine"]
