"""How a table's columns share the width there is: the column policy of `VirtualTable`, on its own.

Each column is as wide as its content needs (what the owner measured, within the column's bounds), and
the growing column (a queue's text, a run's inputs) takes the rest. Short of room, columns that can go
go first (the assignee, the dates: the detail still shows them), then the widest give up width down to
their least; only then does the table scroll sideways.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rich.cells import cell_len

from console.widgets.live_table import Column

PADDING = 1
"""Blank cells on each side of a column."""


def fit_widths(columns: Sequence[Column], room: int, wanted: Mapping[str, int]) -> list[int]:
    """Each column's width for `room` cells (0: not shown). `wanted`: what a column's content needs."""
    widths: list[int] = []
    for column in columns:
        width = max(wanted.get(column.key, column.width), len(column.label))
        if column.most is not None:
            width = min(width, column.most)
        if column.grow:
            width = max(column.least or 0, len(column.label))
        widths.append(width)
    floors = [
        width if c.least is None or c.grow else min(width, c.least)
        for c, width in zip(columns, widths, strict=True)
    ]

    def used() -> int:
        return sum(width + 2 * PADDING for width in widths if width)

    for index in sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: columns[i].drop):
        if used() <= room:
            break
        widths[index] = floors[index] = 0
    over = used() - room
    while over > 0:
        index = max(range(len(widths)), key=lambda i: widths[i] - floors[i])
        if widths[index] <= floors[index]:
            break
        widths[index] -= 1
        over -= 1
    grow = next((i for i, c in enumerate(columns) if c.grow), None)
    if grow is not None and over < 0:
        widths[grow] -= over
    return widths


def longest(values: Iterable[str]) -> int:
    """The width the widest of these values needs (0 for none): what a column's content wants."""
    return max(map(cell_len, values), default=0)
