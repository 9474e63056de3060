"""The stage menu: moments a presenter can trigger now, each on a fresh run whose steps are cued.

Each moment starts a run of one sample process with the inputs that lead there, cues what the demo's
agents and people do at each step (actors/director.py), leaves to the presenter what the audience should see
them decide, and says how to recognise, in the run view (`get_run`), that the moment has happened: the
state it names. Stories (story.py) use the same moments, so a talk and the menu show the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from console.client.wire import RunMode
from demo.actors.director import Cue
from demo.world.values import JsonObject

View = Mapping[str, Any]
"""The `data` of a `get_run` result."""


def open_items(view: View, step_id: str) -> list[dict[str, Any]]:
    return [w for w in view.get("workItems") or () if w.get("stepId") == step_id]


def step_state(view: View, step_id: str) -> dict[str, Any]:
    return next((s for s in view.get("steps") or () if s.get("id") == step_id), {})


def record(view: View, step_id: str) -> dict[str, Any]:
    return ((view.get("data") or {}).get("steps") or {}).get(step_id) or {}


def _escalated(view: View) -> bool:
    items = open_items(view, "verify_order")
    return any((w.get("escalation") or {}).get("note") and "check" not in w["escalation"] for w in items)


def _refused_then_fixed(view: View) -> bool:
    done = record(view, "verify_order")
    return (done.get("check") or {}).get("verdict") == "pass" and "Revised after the model check" in str(
        done.get("summary")
    )


def _unsure(view: View) -> bool:
    items = open_items(view, "verify_order")
    return any(((w.get("escalation") or {}).get("check") or {}).get("verdict") == "unsure" for w in items)


def _reworked(view: View) -> bool:
    done = record(view, "review_request")
    earlier = [h for h in done.get("history") or () if isinstance(h.get("output"), dict)]
    return "output" in done and bool(earlier) and earlier[-1]["output"] != done["output"]


def _picked_up(view: View) -> bool:
    done = record(view, "assess_vendor")
    return "output" in done and "Picked up after an expired lease" in str(done.get("summary"))


def _overdue(view: View) -> bool:
    return step_state(view, "lead_approval").get("overdue") is True


def _joined(view: View) -> bool:
    branches_done = all(
        step_state(view, s).get("state") == "done" for s in ("enroll_device", "create_accounts")
    )
    return branches_done and step_state(view, "book_courier").get("state") is not None


@dataclass(frozen=True)
class Moment:
    name: str
    title: str
    process: str
    inputs: JsonObject
    cues: dict[str, Cue]
    reached: Callable[[View], bool]
    """The state the moment names, read from the run view."""
    look: str
    """What to show the audience once it is there."""
    leave: tuple[str, ...] = ()
    """Steps left to the presenter: demo people never decide their work items."""
    needs_agents: int = 1
    mode: RunMode = "live"


MOMENTS: tuple[Moment, ...] = (
    Moment(
        "escalation",
        "An escalation with a realistic note",
        "customer-refund",
        {"reason": "damaged", "requestedAmount": 86.4},
        {"verify_order": Cue(fate="escalate")},
        _escalated,
        "The agent could not find the order and escalated with a note; it waits for you in Work.",
        leave=("verify_order",),
    ),
    Moment(
        "refused-then-fixed",
        "A submission refused, then fixed",
        "customer-refund",
        {"reason": "wrong_item", "requestedAmount": 64.9},
        {"verify_order": Cue(fate="misjudge")},
        _refused_then_fixed,
        "The model check refused the agent's verdict; the agent reconsidered and the check passed.",
    ),
    Moment(
        "unsure-check",
        "A check that is unsure",
        "customer-refund",
        {"reason": "changed_mind", "requestedAmount": 129.0},
        {"verify_order": Cue(pin={"daysSinceDelivery": 12})},
        _unsure,
        "The check was unsure of the summary: the submission is held for you to decide.",
        leave=("verify_order",),
    ),
    Moment(
        "rework",
        "A rejection and rework, with a diff",
        "purchase-order-approval",
        {},
        {
            "review_request": Cue(pin={"withinBudget": True, "vendorActive": True}),
            "finance_approval": Cue(decision="rejected"),
        },
        _reworked,
        "Finance rejected the review with a note; the agent reworked it. The run shows the change.",
    ),
    Moment(
        "lease-lapse",
        "A lease that lapses and another agent picks up",
        "vendor-contract-renewal",
        {"contractOwner": "lena@example.com"},
        {"assess_vendor": Cue(fate="lapse"), "owner_decision": Cue(pin={"decision": "renew"})},
        _picked_up,
        "One agent stopped answering; its lease lapsed and another agent resumed from its progress.",
        needs_agents=2,
    ),
    Moment(
        "overdue",
        "An item going overdue",
        "customer-refund",
        {"reason": "damaged", "requestedAmount": 420.0},
        {},
        _overdue,
        "Nobody has approved the refund within its hour: it is overdue.",
        leave=("lead_approval",),
    ),
    Moment(
        "fork-join",
        "A parallel fork and join",
        "new-hire-laptop",
        {"jobFamily": "engineering", "needsMonitor": True, "manager": "mira@example.com"},
        {},
        _joined,
        "Enrolling the laptop and creating the accounts ran side by side, then joined.",
    ),
)
BY_NAME = {m.name: m for m in MOMENTS}


def moment(name: str) -> Moment:
    try:
        return BY_NAME[name]
    except KeyError:
        known = ", ".join(BY_NAME)
        raise KeyError(f"no stage moment {name!r} (known: {known})") from None
