"""No import circle anywhere in the product: entry point, demo, console, engine, runner and benches
(imports under `TYPE_CHECKING` aside).

The graph is import-linter's own (grimp), so this test and `lint-imports` read the same imports; a
circle is a strongly connected component of more than one module, or a module importing itself.
"""

from __future__ import annotations

import grimp

PACKAGES = ("apc", "demo", "console", "engine", "conform", "bench")


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every strongly connected component that is a circle, each sorted, found without recursion
    (Tarjan's algorithm with an explicit stack)."""
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            module, position = work.pop()
            if position == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            targets = edges[module]
            if position < len(targets):
                work.append((module, position + 1))
                target = targets[position]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            if low[module] == index[module]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1 or module in edges[module]:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
    return sorted(found)


def describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    """The modules of one circle and, for each, which of the others it imports."""
    members = set(component)
    lines = [f"{len(component)} modules in a circle:"]
    for module in component:
        inside = sorted(members & graph.find_modules_directly_imported_by(module))
        lines.append(f"  {module} -> {', '.join(inside)}")
    return "\n".join(lines)


def test_no_package_has_an_import_circle() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)
    found = cycles(graph)
    assert not found, "\n\n".join(describe(graph, component) for component in found)


def test_circles_are_found_and_named() -> None:
    graph = grimp.ImportGraph()
    for module in ("p.a", "p.b", "p.c", "p.d", "p.e", "p.f"):
        graph.add_module(module)
    for importer, imported in (
        ("p.a", "p.b"),
        ("p.b", "p.c"),
        ("p.c", "p.a"),
        ("p.c", "p.d"),
        ("p.e", "p.e"),
        ("p.f", "p.d"),
    ):
        graph.add_import(importer=importer, imported=imported)
    assert cycles(graph) == [["p.a", "p.b", "p.c"], ["p.e"]]
    assert describe(graph, ["p.a", "p.b", "p.c"]).splitlines() == [
        "3 modules in a circle:",
        "  p.a -> p.b",
        "  p.b -> p.c",
        "  p.c -> p.a",
    ]
