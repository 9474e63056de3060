"""A character grid where lines are stored as directions, so crossings and corners draw themselves.

Each cell keeps which of its four sides a line leaves by; the glyph is chosen at the end, so two edges
meeting in one cell become `┬` or `┼` without either knowing about the other.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

N, E, S, W = 1, 2, 4, 8

_SOLID = {
    0: " ",
    N: "│",
    S: "│",
    N | S: "│",
    E: "─",
    W: "─",
    E | W: "─",
    E | S: "┌",
    W | S: "┐",
    N | E: "└",
    N | W: "┘",
    N | E | S: "├",
    N | W | S: "┤",
    E | W | S: "┬",
    N | E | W: "┴",
    N | E | S | W: "┼",
}
_DASHED = {N: "┆", S: "┆", N | S: "┆", E: "┄", W: "┄", E | W: "┄"}


@dataclass(frozen=True)
class Span:
    """A run of cells on one row that share a role (`edge`, `current`, `label`, ...); styling is the viewer's."""

    row: int
    start: int
    end: int
    role: str


class Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self._bits = [[0] * width for _ in range(height)]
        self._dashed = [[False] * width for _ in range(height)]
        self._solid = [[False] * width for _ in range(height)]
        self._text: dict[tuple[int, int], str] = {}
        self._roles: list[list[str]] = [[""] * width for _ in range(height)]

    def inside(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def _mark(self, x: int, y: int, bits: int, dashed: bool, role: str) -> None:
        if not self.inside(x, y):
            return
        self._bits[y][x] |= bits
        if dashed:
            self._dashed[y][x] = True
        else:
            self._solid[y][x] = True
        if not self._roles[y][x] or self._roles[y][x] == "reject":
            self._roles[y][x] = role

    def line(self, points: list[tuple[int, int]], *, dashed: bool = False, role: str = "edge") -> None:
        """An orthogonal polyline through `points`; consecutive points share a row or a column."""
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            if x0 == x1:
                step, towards, back = (1, S, N) if y1 > y0 else (-1, N, S)
                for y in range(y0, y1, step):
                    self._mark(x0, y, towards, dashed, role)
                    self._mark(x0, y + step, back, dashed, role)
            elif y0 == y1:
                step, towards, back = (1, E, W) if x1 > x0 else (-1, W, E)
                for x in range(x0, x1, step):
                    self._mark(x, y0, towards, dashed, role)
                    self._mark(x + step, y0, back, dashed, role)
            else:
                raise ValueError("map lines are orthogonal")

    def extend(self, x: int, y: int, bits: int, *, dashed: bool = False, role: str = "edge") -> None:
        self._mark(x, y, bits, dashed, role)

    def occupied(self, x: int, y: int) -> bool:
        return self.inside(x, y) and (self._bits[y][x] != 0 or (x, y) in self._text)

    def put(self, x: int, y: int, text: str, role: str) -> None:
        for offset, char in enumerate(text):
            if self.inside(x + offset, y):
                self._text[(x + offset, y)] = char
                self._roles[y][x + offset] = role

    def label(self, x: int, y: int, text: str, role: str = "label") -> None:
        """Text that stops, with an ellipsis, before it would cover a line or other text."""
        room = 0
        while room < len(text) and self.inside(x + room, y) and not self.occupied(x + room, y):
            room += 1
        if room >= len(text):
            self.put(x, y, text, role)
        elif room >= 2:
            self.put(x, y, text[: room - 2] + "…", role)

    def _glyph(self, x: int, y: int) -> str:
        if (x, y) in self._text:
            return self._text[(x, y)]
        bits = self._bits[y][x]
        if self._dashed[y][x] and not self._solid[y][x] and bits in _DASHED:
            return _DASHED[bits]
        return _SOLID[bits]

    def lines(self) -> list[str]:
        return ["".join(self._glyph(x, y) for x in range(self.width)).rstrip() for y in range(self.height)]

    def spans(self) -> list[Span]:
        found: list[Span] = []
        for y, roles in enumerate(self._roles):
            start = 0
            while start < self.width:
                role = roles[start]
                end = start
                while end < self.width and roles[end] == role:
                    end += 1
                if role:
                    found.append(Span(y, start, end, role))
                start = end
        return found
