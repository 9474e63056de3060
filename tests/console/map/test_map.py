"""The process map as a pure function: lanes, decision labels, rejections, fork and join, the position."""

from __future__ import annotations

import textwrap

from console.map.graph import graph_from_process
from console.map.layout import draw_process_map
from engine.document import Process, load
from tests.console.console_support import REVIEW_PAIR
from tests.support.schemas import SPEC

FIXTURES = SPEC / "conformance" / "fixtures"


def document(text: str) -> Process:
    loaded = load(textwrap.dedent(text).lstrip("\n"))
    assert loaded.process is not None, loaded.issues
    return loaded.process


def fixture(name: str) -> Process:
    return document((FIXTURES / name / "PROCESS.md").read_text())


VENDOR_CHECK = """\
           Agent               finance-approver
   ──────────────────────   ──────────────────────
              ● Start
 ┌┄┄┄┐        │
 ┆   ▼        ▼
 ┆ ┌ agent · done ──────┐
 ┆ │ Check vendor       │
 ┆ │ 2 out·file·check   │
 ┆ └──────────┬─────────┘
 ┆            ◆
 ┆            ├────────────────────────┐
 ┆            ▼                        ▼
 ┆ ┌ finish ────────────┐   ┌ approve · waiting ─┐
 ┆ │ End: declined      │   │ Approve            │
 ┆ │ step decline       │   │ due 2d             │
 ┆ └────────────────────┘   └─┬────────┬─────────┘
 ┆                            ┆        │
 └┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄ rejected ┘        │ approved
                                       ▼
                            ┌ finish ────────────┐
                            │ End: onboarded     │
                            │ step done          │
                            └────────────────────┘"""

REVIEW_PAIR_MAP = """\
         legal               finance-approver
 ──────────────────────   ──────────────────────
            ● Start
            ▼
 ┌ parallel · waiting ┐
 │ Review             │
 │ 2 branches         │
 └──────────┬─────────┘
            │
            ├────────────────────────┐
            ▼                        ▼
 ┌ task · done ───────┐   ┌ task · waiting ────┐
 │ Legal              │   │ Finance            │
 │ 1 out              │   │ 1 out              │
 └──────────┬─────────┘   └──────────┬─────────┘
            │                        │
            ▼                        ▼
          ════════════ join ════════════
                        │
            ┌───────────┘
            ▼
 ┌ finish ────────────┐
 │ End: reviewed      │
 │ step done          │
 └────────────────────┘"""


def test_a_decision_an_approval_and_its_rejection_are_drawn_in_lanes() -> None:
    drawing = draw_process_map(fixture("vendor-check"), {"check_vendor": "done", "approve": "waiting"})
    assert drawing.text == VENDOR_CHECK
    assert drawing.current == ("approve",)


def test_the_current_step_is_marked_for_highlighting_and_done_steps_too() -> None:
    drawing = draw_process_map(fixture("vendor-check"), {"check_vendor": "done", "approve": "waiting"})
    approve, check = drawing.boxes["approve"], drawing.boxes["check_vendor"]
    current = {(s.row, s.start, s.end) for s in drawing.spans if s.role == "current"}
    assert current == {(approve.y + i, approve.x, approve.x + approve.width) for i in range(approve.height)}
    done = {(s.row, s.start, s.end) for s in drawing.spans if s.role == "done"}
    assert done == {(check.y + i, check.x, check.x + check.width) for i in range(check.height)}
    rejected = [s for s in drawing.spans if s.role == "reject" and s.row == 17]
    assert [(s.start, s.end) for s in rejected] == [(1, 31)]


def test_parallel_branches_fork_from_one_bus_and_meet_at_a_join_bar() -> None:
    states = {"review": "waiting", "legal": "done", "finance": "waiting"}
    drawing = draw_process_map(document(REVIEW_PAIR), states)
    assert drawing.text == REVIEW_PAIR_MAP
    assert drawing.current == ("review", "finance")


def test_decision_labels_sit_on_their_routes() -> None:
    text = """
    ---
    name: routed
    description: Two labelled routes.
    steps:
      - id: triage
        agent: Decide.
        next:
          - { to: fix, when: It is a bug }
          - { to: close, when: Works as intended }
      - id: fix
        agent: Fix it.
        next: close
      - id: close
        finish: closed
    ---
    Body.
    """
    lines = draw_process_map(document(text)).lines
    assert lines[8:19] == [
        "            ◆",
        "            │ It is a bug",
        "            ├───────────┐ Works as intended",
        "            ▼           │",
        " ┌ agent ─────────────┐ │",
        " │ Fix                │ │",
        " │ Fix it.            │ │",
        " └──────────┬─────────┘ │",
        "            │           │",
        "            ├───────────┘",
        "            ▼",
    ]


def test_lanes_put_waits_and_finishes_beside_the_step_before_them() -> None:
    graph = graph_from_process(fixture("customer-offboarding"))
    assert graph.lanes == ["Agent", "account-owner", "finance-collections", "data-steward"]
    lanes = {node.id: graph.lanes[node.lane] for node in graph.nodes}
    assert lanes["effective_time"] == "account-owner"
    assert lanes["settlement_event"] == "Agent"
    assert lanes["done"] == "data-steward"


def test_edges_carry_their_kind_and_label() -> None:
    graph = graph_from_process(fixture("customer-offboarding"))
    edges = {(e.source, e.target): (e.kind, e.label) for e in graph.edges}
    assert edges[("authorize", "effective_time")] == ("approved", "approved")
    assert edges[("final_invoice", "settlement_event")] == ("route", None)
    assert edges[("settlement_event", "verify_settlement")] == ("next", None)
    assert edges[("settlement_event", "finance_followup")] == ("timeout", "timeout")
    parallel = graph_from_process(fixture("major-incident"))
    kinds = sorted((e.source, e.target, e.kind) for e in parallel.edges if "respond" in (e.source + e.target))
    assert kinds == [
        ("activate", "respond", "next"),
        ("close_review", "respond", "rejected"),
        ("communications", "join:respond", "next"),
        ("join:respond", "close_review", "join"),
        ("operations", "join:respond", "next"),
        ("respond", "communications", "fork"),
        ("respond", "operations", "fork"),
        ("respond", "security", "fork"),
        ("security", "join:respond", "next"),
    ]


def test_every_fixture_draws_with_every_card_on_the_canvas() -> None:
    for folder in sorted(FIXTURES.iterdir()):
        process = fixture(folder.name)
        drawing = draw_process_map(process)
        ids = {step.id for step in process.steps}
        assert ids <= set(drawing.boxes), folder.name
        width = max(len(line) for line in drawing.lines)
        for box in drawing.boxes.values():
            assert box.x + box.width <= width and box.y + box.height <= len(drawing.lines), folder.name
