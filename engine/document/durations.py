"""Durations (spec §2.4): an integer followed by `m`, `h` or `d`, nothing else.

One parser serves the validator (`due`, `wait`, `timeout`) and the runtime (timers), so a document
that validates can never hold a duration the runtime cannot schedule.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"(0|[1-9][0-9]{0,9})([mhd])")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}

MAX_DURATION_SECONDS = 36_500 * 86_400
"""One hundred years. Larger values are refused: a timer that far out cannot be a real deadline, and an
unbounded integer would overflow date arithmetic in the runtime."""

DURATION_FORM = (
    f"an integer followed by m, h or d, such as 30m, 4h or 3d, up to {MAX_DURATION_SECONDS // 86_400}d"
)


def parse_duration(text: object) -> int | None:
    """Seconds for a valid duration such as `30m`, `4h`, `3d`; None for anything else.

    Zero is an integer, so `0m` is accepted (a wait that continues at once). Leading zeros, signs,
    spaces, fractions and other units are refused, as is anything above `MAX_DURATION_SECONDS`.
    """
    if not isinstance(text, str):
        return None
    match = _DURATION.fullmatch(text)
    if match is None:
        return None
    seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return seconds if seconds <= MAX_DURATION_SECONDS else None
