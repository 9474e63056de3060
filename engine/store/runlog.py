"""The run log's bound: how many entries a run keeps, and in which row each goes.

A run keeps its first `HEAD` entries for good (how it started and went on) and its latest `RING`
entries in a ring of rows: entry `seq` past the head overwrites the row of entry `seq - RING`. So a
run never holds more than `HEAD + RING` rows, and a write adds its entries with one insert, with no
delete or count. What gave way shows as a gap in `seq` between the head and the ring; the readers
say so (`dropped_before`).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.store.base import LogEntry

HEAD = 50
RING = 950


def slot(seq: int) -> int:
    """The row (per run) entry `seq` is stored in."""
    if seq <= HEAD:
        return seq
    return HEAD + 1 + (seq - HEAD - 1) % RING


def dropped_before(entries: Sequence[LogEntry], after_seq: int) -> dict[int, int]:
    """For each entry that follows a gap, how many entries before it gave way to the cap.

    `after_seq` is the seq the page starts after (0 for the first page)."""
    gaps: dict[int, int] = {}
    previous = after_seq
    for entry in entries:
        if entry.seq > previous + 1:
            gaps[entry.seq] = entry.seq - previous - 1
        previous = entry.seq
    return gaps
