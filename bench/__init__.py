"""Benchmarks, run as scripts (`.venv/bin/python bench/NAME.py`); `bench.seed` is shared with the tests."""
