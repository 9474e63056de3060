"""Rules about the routing graph as a whole: spec §2.2's last paragraph and parallel profile §2.

They need every step addressable by a unique id; a document whose ids are broken gets its id issues
first, and these rules once the ids are sound (anything else would guess which step was meant).
"""

from __future__ import annotations

from collections import deque

from engine.document.model import JOIN
from engine.document.step_rules import Edge, StepInfo, StepTable
from engine.document.wording import Report, article, show

FORWARD_KEYS = ("next", "default", "on_timeout")
"""The edges the acyclicity rule follows: only `on_reject` may go back."""

Branch = tuple[str, str]
"""(parallel step id, branch entry id)."""


def check_graph(table: StepTable, report: Report) -> None:
    """Default edges, the last step, parallel branches, reachability and acyclicity, in that order."""
    if not table.infos or not table.addressable:
        return
    infos = table.infos
    index_of = {info.id: info.index for info in infos if info.id is not None}
    membership = _branches(table, index_of, report) if table.uses_parallel else {}
    edges = table.edges + _default_edges(infos, membership, report)
    if not table.unresolved:
        if table.uses_parallel:
            _branch_borders(infos, edges, index_of, membership, report)
        _reachability(infos, edges, index_of, report)
    _acyclicity(infos, edges, index_of, report)


def _label(branch: Branch) -> str:
    return f"the branch '{branch[1]}' of '{branch[0]}'"


def _default_edges(infos: list[StepInfo], membership: dict[int, list[Branch]], report: Report) -> list[Edge]:
    """The following-step default (spec §2.2); never inside a branch (parallel §2)."""
    edges: list[Edge] = []
    for info in infos:
        if info.written_next or info.kind == "finish" or info.index in membership:
            continue
        if info.index + 1 < len(infos):
            following = infos[info.index + 1].id
            assert following is not None
            edges.append(Edge(info.index, "default", following, f"{info.label}.next"))
        elif info.kind is not None:
            report.add(
                f"{info.label}.next",
                f"the last step must name next: it is {article(info.kind)} step, not a finish",
            )
    return edges


def _branches(table: StepTable, index_of: dict[str, int], report: Report) -> dict[int, list[Branch]]:
    """Which branch each step belongs to: the entry plus all it reaches by next and on_timeout, up to join."""
    infos = table.infos
    outgoing: dict[int, list[Edge]] = {}
    for edge in table.edges:
        outgoing.setdefault(edge.source, []).append(edge)
    membership: dict[int, list[Branch]] = {}
    for parallel in infos:
        if parallel.kind != "parallel":
            continue
        assert parallel.id is not None
        continuation = _continuation(table, parallel.index, outgoing, index_of)
        for entry_edge in outgoing.get(parallel.index, []):
            if entry_edge.key != "parallel":
                continue
            entry = index_of[entry_edge.target]
            entry_kind = infos[entry].kind
            if entry_kind == "finish":
                report.add(
                    entry_edge.path,
                    f"branch entry {show(entry_edge.target)} is a finish; a branch ends with join",
                )
            elif entry_kind == "parallel":
                report.add(
                    entry_edge.path,
                    f"branch entry {show(entry_edge.target)} is a parallel step; branches do not nest in parallel-1",
                )
            else:
                branch = (parallel.id, entry_edge.target)
                _expand(table, branch, entry, outgoing, index_of, membership, continuation, report)
    for index, branches in membership.items():
        if len(branches) > 1:
            names = ", ".join(_label(b) for b in branches)
            report.add(
                infos[index].label, f"is in more than one branch ({names}); no step is in two branches"
            )
    return membership


def _expand(
    table: StepTable,
    branch: Branch,
    entry: int,
    outgoing: dict[int, list[Edge]],
    index_of: dict[str, int],
    membership: dict[int, list[Branch]],
    outside: set[int],
    report: Report,
) -> None:
    infos = table.infos
    parallel_index = index_of[branch[0]]
    todo = deque([entry])
    seen = {entry}
    while todo:
        index = todo.popleft()
        membership.setdefault(index, []).append(branch)
        info = infos[index]
        if not info.written_next and info.kind is not None:
            report.add(
                f"{info.label}.next",
                f"required in {_label(branch)}: a step of the branch or join (the following-step default "
                "does not apply inside a branch)",
            )
        for edge in outgoing.get(index, []):
            if edge.key not in ("next", "on_timeout") or edge.target == JOIN:
                continue
            target = index_of[edge.target]
            kind = infos[target].kind
            if target == parallel_index:
                report.add(
                    edge.path,
                    f"a step in {_label(branch)} cannot route to its parallel step; it ends with join",
                )
            elif kind == "parallel":
                report.add(
                    edge.path,
                    f"{show(edge.target)} is a parallel step: {_label(branch)} cannot contain one (no nesting)",
                )
            elif kind == "finish":
                report.add(
                    edge.path,
                    f"{show(edge.target)} is a finish: {_label(branch)} ends with join, never a finish",
                )
            elif target in outside:
                report.add(
                    edge.path,
                    f"{show(edge.target)} comes after the parallel step, outside {_label(branch)}; "
                    "a branch step routes within its branch or to join",
                )
            elif target not in seen:
                seen.add(target)
                todo.append(target)


def _continuation(
    table: StepTable, parallel: int, outgoing: dict[int, list[Edge]], index_of: dict[str, int]
) -> set[int]:
    """Steps the parallel step's own `next` leads to: outside its branches, so a branch that routes
    there is blamed at that edge rather than the continuation counted as part of the branch."""
    infos = table.infos
    entries = {index_of[e.target] for e in outgoing.get(parallel, []) if e.key == "parallel"}

    def successors(index: int) -> list[int]:
        written = [
            index_of[e.target]
            for e in outgoing.get(index, [])
            if e.key in ("next", "on_timeout") and e.target != JOIN
        ]
        info = infos[index]
        if not info.written_next and info.kind != "finish" and index + 1 < len(infos):
            written.append(index + 1)
        return written

    start = [i for i in successors(parallel) if i not in entries]
    reached: set[int] = set()
    todo = deque(start)
    while todo:
        index = todo.popleft()
        if index in reached or index in entries or index == parallel:
            continue
        reached.add(index)
        todo.extend(successors(index))
    return reached


def _branch_borders(
    infos: list[StepInfo],
    edges: list[Edge],
    index_of: dict[str, int],
    membership: dict[int, list[Branch]],
    report: Report,
) -> None:
    """Only the parallel step leads into a branch; `join` and `on_reject` stay on their side of the border."""
    for edge in edges:
        inside = membership.get(edge.source)
        if edge.key == "parallel":
            continue
        if edge.target == JOIN:
            if inside is None:
                report.add(edge.path, "join is allowed only inside a branch of a parallel step")
            continue
        target = index_of[edge.target]
        target_branches = membership.get(target)
        if inside is not None:
            if edge.key == "on_reject" and not set(target_branches or ()) & set(inside):
                report.add(
                    edge.path,
                    f"{show(edge.target)} is outside {_label(inside[0])}; on_reject in a branch stays in it",
                )
            continue
        if target_branches is None:
            continue
        where = _label(target_branches[0])
        if edge.key == "on_reject":
            report.add(
                edge.path,
                f"{show(edge.target)} is inside {where}; on_reject may target the parallel step or a step before it",
            )
        elif edge.key == "default":
            report.add(edge.path, f"the following step {show(edge.target)} is inside {where}; name next")
        else:
            report.add(
                edge.path,
                f"{show(edge.target)} is inside {where}; only the parallel step leads into a branch",
            )


def _reachability(infos: list[StepInfo], edges: list[Edge], index_of: dict[str, int], report: Report) -> None:
    """Every step is reachable from the first by any edge, branch entries included (parallel §2)."""
    outgoing: dict[int, list[int]] = {}
    for edge in edges:
        if edge.target != JOIN:
            outgoing.setdefault(edge.source, []).append(index_of[edge.target])
    reached = {0}
    todo = deque([0])
    while todo:
        for target in outgoing.get(todo.popleft(), []):
            if target not in reached:
                reached.add(target)
                todo.append(target)
    first = show(infos[0].id)
    for info in infos:
        if info.index not in reached:
            report.add(info.label, f"is not reachable from the first step {first}")


def _acyclicity(infos: list[StepInfo], edges: list[Edge], index_of: dict[str, int], report: Report) -> None:
    """Following next and on_timeout, no step is visited twice (spec §2.2; join and entries are exempt).

    Default edges always go forward, so every cycle holds a written edge back to an earlier (or the
    same) step; that edge is the one reported, once per edge, with one cycle it closes.
    """
    forward = [e for e in edges if e.key in FORWARD_KEYS and e.target != JOIN]
    successors: dict[int, list[int]] = {}
    for edge in forward:
        successors.setdefault(edge.source, []).append(index_of[edge.target])
    component = _components(len(infos), successors)
    for edge in forward:
        target = index_of[edge.target]
        if target <= edge.source and component[target] == component[edge.source]:
            cycle = [*_path(target, edge.source, successors, component), target]
            shown = " → ".join(str(infos[i].id) for i in cycle)
            report.add(
                edge.path,
                f"{show(edge.target)} goes back to an earlier step: following next and on_timeout the run "
                f"would visit it twice ({shown}); only on_reject may go back",
            )


def _path(start: int, goal: int, successors: dict[int, list[int]], component: list[int]) -> list[int]:
    """A shortest path from start to goal inside their strongly connected component."""
    previous: dict[int, int] = {}
    todo = deque([start])
    seen = {start}
    while todo:
        node = todo.popleft()
        if node == goal:
            break
        for nxt in successors.get(node, []):
            if nxt not in seen and component[nxt] == component[start]:
                seen.add(nxt)
                previous[nxt] = node
                todo.append(nxt)
    path = [goal]
    while path[-1] != start:
        path.append(previous[path[-1]])
    return path[::-1]


def _components(count: int, successors: dict[int, list[int]]) -> list[int]:
    """Tarjan's strongly connected components, iterative so a long document cannot exhaust the stack."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    component = [-1] * count
    counter = 0
    for root in range(count):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            children = successors.get(node, [])
            if child < len(children):
                work.append((node, child + 1))
                nxt = children[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = node
                    if member == node:
                        break
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return component
