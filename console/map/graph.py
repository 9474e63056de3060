"""A process as the map sees it: nodes in lanes and labelled edges.

The map is drawn from the published document alone (guides/process-maps.md). It reads the engine's
validated `Process`, so default `next`, branch membership and role names come from the one place that
defines them rather than being worked out again here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from engine.document.model import JOIN, Process, Step

AGENT_LANE = "Agent"

EdgeKind = Literal["next", "route", "approved", "rejected", "timeout", "fork", "join"]


@dataclass(frozen=True)
class MapEdge:
    source: str
    target: str
    kind: EdgeKind
    label: str | None = None

    @property
    def dashed(self) -> bool:
        return self.kind == "rejected"


@dataclass
class MapNode:
    id: str
    kind: str
    """A step kind, or `join` for the bar where a parallel step's branches meet."""
    title: str
    detail: str
    index: float
    """Document order; a join bar sorts just after its parallel step's last branch step."""
    lane: int = -1
    decision: bool = False
    """`next` is a list: the actor chooses a route, drawn as a decision point."""


@dataclass
class MapGraph:
    nodes: list[MapNode]
    edges: list[MapEdge]
    lanes: list[str]
    first: str | None
    node_by_id: dict[str, MapNode] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.node_by_id = {node.id: node for node in self.nodes}

    def incoming(self, node_id: str) -> list[MapEdge]:
        return [edge for edge in self.edges if edge.target == node_id]


def humanize(step_id: str) -> str:
    words = step_id.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def join_id(parallel_id: str) -> str:
    return f"{JOIN}:{parallel_id}"


def parallel_of(join_node_id: str) -> str:
    return join_node_id.removeprefix(f"{JOIN}:")


def _badges(step: Step) -> str:
    parts: list[str] = []
    if step.output:
        parts.append(f"{len(step.output)} out")
    parts.extend(step.evidence or ())
    if step.check is not None:
        parts.append("check")
    if step.due:
        parts.append(f"due {step.due}")
    if step.kind == "approve" and not step.on_reject:
        parts.append("reject ends")
    return "·".join(parts)


def _detail(step: Step) -> str:
    if step.kind == "wait":
        return f"wait {step.value}"
    if step.kind == "wait_until":
        return f"until {step.value}"
    if step.kind == "wait_for":
        timeout = f" · {step.timeout}" if step.timeout else ""
        return f"event {step.value}{timeout}"
    if step.kind == "finish":
        return "" if step.value == step.id else f"step {step.id}"
    if step.kind == "parallel":
        return f"{len(step.branches)} branches"
    return _badges(step) or " ".join(str(step.instructions or "").split())


def _edges(step: Step, branch: str | None) -> list[MapEdge]:
    def target(to: str) -> str:
        return join_id(branch) if to == JOIN and branch else to

    found: list[MapEdge] = []
    if step.routes is not None:
        found += [MapEdge(step.id, target(r.to), "route", r.when) for r in step.routes]
    elif step.next is not None:
        approved = step.kind == "approve"
        found.append(
            MapEdge(
                step.id,
                target(step.next),
                "approved" if approved else "next",
                "approved" if approved else None,
            )
        )
    found += [MapEdge(step.id, entry, "fork") for entry in step.branches]
    if step.on_reject:
        found.append(MapEdge(step.id, step.on_reject, "rejected", "rejected"))
    if step.on_timeout and step.on_timeout != step.next:
        found.append(MapEdge(step.id, target(step.on_timeout), "timeout", "timeout"))
    return found


def graph_from_process(process: Process) -> MapGraph:
    """Nodes, edges and lanes; a parallel step's continuation leaves from its join bar."""
    nodes: list[MapNode] = []
    edges: list[MapEdge] = []
    joins: dict[str, float] = {}
    for index, step in enumerate(process.steps):
        title = f"End: {step.value}" if step.kind == "finish" else humanize(step.id)
        nodes.append(
            MapNode(step.id, step.kind, title, _detail(step), float(index), decision=step.routes is not None)
        )
        branch = process.branch_of(step.id)
        if branch is not None:
            joins[branch] = max(joins.get(branch, 0.0), index + 0.5)
        edges += _edges(step, branch)
    for parallel, at in joins.items():
        nodes.append(MapNode(join_id(parallel), JOIN, "join", "", at))
        edges = [
            MapEdge(join_id(parallel), e.target, "join") if e.source == parallel and e.kind == "next" else e
            for e in edges
        ]
    nodes.sort(key=lambda node: node.index)
    graph = MapGraph(nodes, edges, [], process.steps[0].id if process.steps else None)
    _assign_lanes(graph, process)
    return graph


def _assign_lanes(graph: MapGraph, process: Process) -> None:
    """Agent first, then one lane per role or person in step order; server steps join their predecessor."""
    names: list[str] = [AGENT_LANE] if any(s.kind == "agent" for s in process.steps) else []
    for step in process.steps:
        if step.kind in ("task", "approve") and (step.person or "person") not in names:
            names.append(step.person or "person")
    for node in graph.nodes:
        if node.kind == "agent":
            node.lane = 0
        elif node.kind in ("task", "approve"):
            node.lane = names.index(process.step(node.id).person or "person")
    graph.lanes = names or ["Server"]
    for node in topological(graph):
        if node.lane >= 0:
            continue
        preds = [graph.node_by_id[e.source] for e in graph.incoming(node.id) if e.kind != "rejected"]
        placed = sorted((p for p in preds if p.lane >= 0), key=lambda p: p.index)
        node.lane = placed[0].lane if placed else 0


def topological(graph: MapGraph) -> list[MapNode]:
    """Forward edges only (rejections go back); ties broken by document order, so layout is stable."""
    indegree = {node.id: 0 for node in graph.nodes}
    forward = [edge for edge in graph.edges if edge.kind != "rejected"]
    for edge in forward:
        indegree[edge.target] += 1
    ready = sorted((node for node in graph.nodes if indegree[node.id] == 0), key=lambda n: n.index)
    order: list[MapNode] = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for edge in forward:
            if edge.source == node.id:
                indegree[edge.target] -= 1
                if indegree[edge.target] == 0:
                    ready.append(graph.node_by_id[edge.target])
                    ready.sort(key=lambda n: n.index)
    seen = {node.id for node in order}
    order.extend(node for node in graph.nodes if node.id not in seen)
    return order
