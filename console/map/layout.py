"""The process map laid out on a character grid: lanes as columns, the flow running down.

A terminal is narrow and scrolls vertically, so each performer gets a column and the steps descend by
rank (longest path from the start). Edges run orthogonally: horizontal parts only in the channels
between ranks, vertical parts in a card's own column when it is free, otherwise in the gutters beside
the lanes. Rejections are dashed and run up the left gutter. Pure: the same graph and states always
give the same drawing, which the viewer colours by each span's role.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from console.map.canvas import Canvas, N, Span
from console.map.graph import (
    MapEdge,
    MapGraph,
    MapNode,
    graph_from_process,
    parallel_of,
    topological,
)
from engine.document.model import JOIN, Process

CARD_WIDTH = 22
CARD_HEIGHT = 4
MAX_LABEL = 24
HEADER_ROWS = 2
CURRENT = frozenset({"ready", "claimed", "waiting"})
TOP = -1
"""The channel above the first rank, where the Start marker sits."""


@dataclass(frozen=True)
class Box:
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True)
class MapDrawing:
    lines: list[str]
    spans: list[Span]
    boxes: dict[str, Box]
    current: tuple[str, ...]
    """Step ids at the run's current position (ready, claimed or waiting), in map order."""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class _Segment:
    """A horizontal run in one channel; `track` is its row inside the channel's track rows."""

    channel: int
    a: int
    b: int
    reserve: tuple[int, int]
    first: bool
    order: int
    bus: str | None = None
    """The source id when this run may share its row with the source's other unlabelled edges (a bus)."""
    label: str | None = None
    label_x: int = 0
    label_inside: bool = False
    track: int = 0


@dataclass
class _Route:
    edge: MapEdge
    src: MapNode
    dst: MapNode
    mode: str
    gutter: int = 0
    track: int = 0
    x_out: int = 0
    x_in: int = 0
    x_gutter: int = 0
    out_segment: _Segment | None = None
    """The horizontal run in the channel below the source; it carries the label."""
    in_segment: _Segment | None = None
    """For a long edge, the horizontal run in the channel above the target."""

    @property
    def segments(self) -> list[_Segment]:
        return [s for s in (self.out_segment, self.in_segment) if s is not None]


def draw_process_map(
    process: Process,
    states: Mapping[str, str | None] | None = None,
    *,
    card_width: int = CARD_WIDTH,
) -> MapDrawing:
    return draw_map(graph_from_process(process), states, card_width=card_width)


def draw_map(
    graph: MapGraph, states: Mapping[str, str | None] | None = None, *, card_width: int = CARD_WIDTH
) -> MapDrawing:
    return _Layout(graph, dict(states or {}), max(card_width, 14)).draw()


def _apart(one: _Segment, other: _Segment) -> bool:
    """Two runs may share a row when they do not touch, or when both are one source's unlabelled bus."""
    if one.bus is not None and one.bus == other.bus:
        return True
    return one.reserve[1] + 1 < other.reserve[0] or one.reserve[0] - 1 > other.reserve[1]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


class _Layout:
    def __init__(self, graph: MapGraph, states: dict[str, str | None], card_width: int) -> None:
        self.graph = graph
        self.states = states
        self.cw = card_width
        self.span: dict[str, tuple[int, int]] = {}
        self.rank: dict[str, int] = {}
        self.occupied: set[tuple[int, int]] = set()
        self.routes: list[_Route] = []
        self.lane_x: list[int] = []
        self.gutter_x: list[int] = []
        self.gutter_tracks: dict[int, list[list[tuple[int, int]]]] = {}
        self.channel_tracks: dict[int, int] = {}
        self.channel_y: dict[int, int] = {}
        self.band_y: dict[int, int] = {}
        self.width = 0

    # ranks and routes

    def _assign_ranks(self) -> None:
        for node in self.graph.nodes:
            if node.kind == JOIN:
                lanes = [self.graph.node_by_id[e.source].lane for e in self.graph.incoming(node.id)]
                self.span[node.id] = (min(lanes, default=node.lane), max(lanes, default=node.lane))
            else:
                self.span[node.id] = (node.lane, node.lane)
        for node in topological(self.graph):
            preds = [e.source for e in self.graph.incoming(node.id) if e.kind != "rejected"]
            rank = max((self.rank[p] + 1 for p in preds if p in self.rank), default=0)
            lo, hi = self.span[node.id]
            while any((lane, rank) in self.occupied for lane in range(lo, hi + 1)):
                rank += 1
            self.occupied.update((lane, rank) for lane in range(lo, hi + 1))
            self.rank[node.id] = rank

    @property
    def ranks(self) -> int:
        return max(self.rank.values(), default=-1) + 1

    def _free(self, lane: int, after: int, before: int) -> bool:
        return all((lane, r) not in self.occupied for r in range(after + 1, before))

    def _in_lane(self, route: _Route) -> int:
        return route.src.lane if route.dst.kind == JOIN and route.src.kind != JOIN else route.dst.lane

    def _plan_routes(self) -> None:
        for edge in self.graph.edges:
            src, dst = self.graph.node_by_id[edge.source], self.graph.node_by_id[edge.target]
            route = _Route(edge, src, dst, "adjacent")
            rs, rt = self.rank[src.id], self.rank[dst.id]
            if edge.dashed:
                route.mode, route.gutter = "gutter", 0
            elif rt == rs + 1:
                route.mode = "adjacent"
            elif self._free(self._in_lane(route), rs, rt):
                route.mode = "target"
            elif src.kind != JOIN and self._free(src.lane, rs, rt):
                route.mode = "source"
            else:
                route.mode, route.gutter = "gutter", self._in_lane(route) + 1
            if route.mode == "gutter":
                span = (min(rs, rt - 1), max(rs, rt - 1))
                tracks = self.gutter_tracks.setdefault(route.gutter, [])
                route.track = next(
                    (
                        i
                        for i, used in enumerate(tracks)
                        if all(span[1] < lo or span[0] > hi for lo, hi in used)
                    ),
                    len(tracks),
                )
                if route.track == len(tracks):
                    tracks.append([])
                tracks[route.track].append(span)
            self.routes.append(route)

    # horizontal geometry

    def _gutter_width(self, gutter: int) -> int:
        inner = 0 < gutter < len(self.graph.lanes)
        return max(3 if inner else 1, 2 * len(self.gutter_tracks.get(gutter, ())) + 1)

    def _place_columns(self) -> None:
        x = 0
        for gutter in range(len(self.graph.lanes) + 1):
            self.gutter_x.append(x)
            x += self._gutter_width(gutter)
            if gutter < len(self.graph.lanes):
                self.lane_x.append(x)
                x += self.cw
        self.width = x

    def _track_x(self, gutter: int, track: int) -> int:
        if gutter == 0:
            return self.gutter_x[0] + self._gutter_width(0) - 2 - 2 * track
        return self.gutter_x[gutter] + 1 + 2 * track

    def _center(self, node: MapNode) -> int:
        lo, hi = self.span[node.id]
        if node.kind == JOIN:
            return (self.lane_x[lo] + self.lane_x[hi] + self.cw) // 2
        return self.lane_x[lo] + self.cw // 2

    def _ports(self, route: _Route) -> None:
        if route.edge.dashed:
            route.x_out = self.lane_x[route.src.lane] + 2
            route.x_in = self.lane_x[route.dst.lane] + 2
        else:
            route.x_out = self._center(route.src)
            joining = route.dst.kind == JOIN and route.src.kind != JOIN
            route.x_in = self._center(route.src) if joining else self._center(route.dst)
        if route.mode == "gutter":
            route.x_gutter = self._track_x(route.gutter, route.track)

    def _segment(
        self, route: _Route, channel: int, a: int, b: int, first: bool, order: int
    ) -> _Segment | None:
        label = _clip(route.edge.label, MAX_LABEL) if first and route.edge.label else None
        if a == b and label is None:
            return None
        bus = route.src.id if first and label is None and not route.edge.dashed else None
        segment = _Segment(channel, a, b, (min(a, b), max(a, b)), first, order, bus, label)
        if label is not None:
            inside = f" {label} "
            if abs(b - a) - 2 >= len(inside):
                segment.label, segment.label_inside = inside, True
                segment.label_x = a + 1 if b > a else a - len(inside)
            else:
                segment.label_x = max(a, b) + 2
                segment.reserve = (min(a, b), segment.label_x + len(label))
        return segment

    def _plan_segments(self) -> None:
        for order, route in enumerate(self.routes):
            self._ports(route)
            rs, rt = self.rank[route.src.id], self.rank[route.dst.id]
            if route.mode in ("adjacent", "target"):
                route.out_segment = self._segment(route, rs, route.x_out, route.x_in, True, order)
            elif route.mode == "source":
                route.out_segment = self._segment(route, rs, route.x_out, route.x_out, True, order)
                route.in_segment = self._segment(route, rt - 1, route.x_out, route.x_in, False, order)
            else:
                route.out_segment = self._segment(route, rs, route.x_out, route.x_gutter, True, order)
                route.in_segment = self._segment(route, rt - 1, route.x_gutter, route.x_in, False, order)
        by_channel: dict[int, list[_Segment]] = {}
        for route in self.routes:
            for segment in route.segments:
                by_channel.setdefault(segment.channel, []).append(segment)
        for channel, segments in by_channel.items():
            rows: list[list[_Segment]] = []
            for segment in sorted(segments, key=lambda s: (not s.first, s.order)):
                segment.track = next(
                    (i for i, used in enumerate(rows) if all(_apart(segment, other) for other in used)),
                    len(rows),
                )
                if segment.track == len(rows):
                    rows.append([])
                rows[segment.track].append(segment)
                self.width = max(self.width, segment.reserve[1] + 1)
            self.channel_tracks[channel] = len(rows)

    # vertical geometry

    def _height(self, node: MapNode) -> int:
        return 1 if node.kind == JOIN else CARD_HEIGHT

    def _channel_height(self, channel: int) -> int:
        tracks = self.channel_tracks.get(channel, 0)
        if channel == self.ranks - 1:
            return 2 + tracks if tracks else 0
        return 2 + tracks

    def _place_rows(self) -> int:
        y = HEADER_ROWS
        self.channel_y[TOP] = y
        y += self._channel_height(TOP)
        for rank in range(self.ranks):
            self.band_y[rank] = y
            nodes = [n for n in self.graph.nodes if self.rank[n.id] == rank]
            y += max((self._height(n) for n in nodes), default=1)
            self.channel_y[rank] = y
            y += self._channel_height(rank)
        return y

    def _track_y(self, segment: _Segment) -> int:
        return self.channel_y[segment.channel] + 1 + segment.track

    # drawing

    def draw(self) -> MapDrawing:
        if not self.graph.nodes:
            return MapDrawing(["(no steps)"], [], {}, ())
        self._assign_ranks()
        self._plan_routes()
        self._place_columns()
        self._plan_segments()
        height = self._place_rows()
        canvas = Canvas(self.width, height)
        boxes: dict[str, Box] = {}
        self._draw_lanes(canvas)
        for route in self.routes:
            self._draw_route(canvas, route)
        self._draw_start(canvas)
        for node in self.graph.nodes:
            boxes[node.id] = self._draw_node(canvas, node)
        for route in self.routes:
            self._draw_label(canvas, route)
        current = tuple(
            n.id
            for n in sorted(self.graph.nodes, key=lambda n: (self.rank[n.id], n.lane))
            if self.states.get(n.id) in CURRENT
        )
        return MapDrawing(canvas.lines(), canvas.spans(), boxes, current)

    def _draw_lanes(self, canvas: Canvas) -> None:
        for lane, name in enumerate(self.graph.lanes):
            title = _clip(name, self.cw)
            canvas.put(self.lane_x[lane] + (self.cw - len(title)) // 2, 0, title, "lane")
            canvas.put(self.lane_x[lane], 1, "─" * self.cw, "lane")

    def _draw_start(self, canvas: Canvas) -> None:
        first = self.graph.node_by_id.get(self.graph.first or "")
        if first is None:
            return
        x, y = self._center(first), self.channel_y[TOP]
        canvas.line([(x, y), (x, self.band_y[self.rank[first.id]] - 1)])
        canvas.put(x, y, "●", "marker")
        canvas.put(x, self.band_y[self.rank[first.id]] - 1, "▼", "edge")
        canvas.label(x + 2, y, "Start", "marker")

    def _draw_route(self, canvas: Canvas, route: _Route) -> None:
        rs, rt = self.rank[route.src.id], self.rank[route.dst.id]
        y_out = self.band_y[rs] + self._height(route.src)
        y_arrow = self.band_y[rt] - 1
        points = [(route.x_out, y_out)]
        turn = route.in_segment if route.mode == "source" else route.out_segment
        if route.out_segment is not None and route.in_segment is not None:
            out_y, in_y = self._track_y(route.out_segment), self._track_y(route.in_segment)
            points += [
                (route.x_out, out_y),
                (route.x_gutter, out_y),
                (route.x_gutter, in_y),
                (route.x_in, in_y),
            ]
        elif turn is not None:
            y = self._track_y(turn)
            points += [(route.x_out, y), (route.x_in, y)]
        points.append((route.x_in, y_arrow))
        dashed = route.edge.dashed
        role = "reject" if dashed else "edge"
        canvas.line(points, dashed=dashed, role=role)
        canvas.extend(route.x_out, y_out, N, dashed=dashed, role=role)
        canvas.put(route.x_in, y_arrow, "▼", role)
        if route.src.decision and not dashed:
            canvas.put(route.x_out, y_out, "◆", "edge")

    def _draw_label(self, canvas: Canvas, route: _Route) -> None:
        for segment in route.segments:
            if segment.label is None:
                continue
            role = "reject" if route.edge.dashed else "label"
            y = self._track_y(segment)
            if segment.label_inside:
                canvas.put(segment.label_x, y, segment.label, role)
            else:
                canvas.label(segment.label_x, y, segment.label, role)

    def _role(self, node: MapNode) -> str:
        state = self.states.get(node.id)
        if state in CURRENT:
            return "current"
        return state if state in ("done", "failed", "cancelled") else "node"

    def _draw_node(self, canvas: Canvas, node: MapNode) -> Box:
        y = self.band_y[self.rank[node.id]]
        lo, _ = self.span[node.id]
        if node.kind == JOIN:
            role = "done" if self.states.get(parallel_of(node.id)) == "done" else "node"
            ports = [r.x_in for r in self.routes if r.dst.id == node.id] + [self._center(node)]
            x0, x1 = min(ports) - 2, max(ports) + 2
            bar = "═" * (x1 - x0 + 1)
            middle = (x1 - x0 + 1 - 6) // 2
            canvas.put(x0, y, bar[:middle] + " join " + bar[middle + 6 :], role)
            return Box(x0, y, x1 - x0 + 1, 1)
        role = self._role(node)
        x, inner = self.lane_x[lo], self.cw - 4
        state = self.states.get(node.id)
        head = f" {node.kind}" + (f" · {state}" if state else "")
        head = _clip(head + " ", self.cw - 2) if len(head) < self.cw - 2 else _clip(head, self.cw - 2)
        top = "┌" + head + "─" * (self.cw - 2 - len(head)) + "┐"
        rows = [
            top,
            "│ " + _clip(node.title, inner).ljust(inner) + " │",
            "│ " + _clip(node.detail, inner).ljust(inner) + " │",
            "└" + "─" * (self.cw - 2) + "┘",
        ]
        for offset, row in enumerate(rows):
            canvas.put(x, y + offset, row, role)
        for route in self.routes:
            if route.src.id == node.id:
                canvas.put(route.x_out, y + CARD_HEIGHT - 1, "┬", role)
        return Box(x, y, self.cw, CARD_HEIGHT)
