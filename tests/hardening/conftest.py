"""Hypothesis profiles for the property tests: a fixed seed (`derandomize`), no deadline (timing is
never asserted; the work bound is counted instead), and in CI no example database and a blob to
reproduce a failure. `make soak` tests raise `max_examples` themselves."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
