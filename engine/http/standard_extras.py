"""The extra tools every server of ours offers (`apc serve`, the embedded endpoint, the demo's)."""

from __future__ import annotations

from engine.http.extra import ExtraTool
from engine.http.whoami import whoami_tool


def standard_extras() -> list[ExtraTool]:
    """Offered beside the fourteen; a caller adds its own (the demo adds `apc_demo_control`)."""
    return [whoami_tool()]
