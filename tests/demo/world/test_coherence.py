"""Generated values keep their invariants: over 1,000 walked runs of the ten sample processes, every
value is one the engine accepts, every rule of the relations file holds, and the run reads as one
story (a refund never exceeds its order, dates run in order, ids and names agree across steps)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from demo.world.expr import Expr, as_time, lookup
from demo.world.relations import Relations, Rule
from demo.world.scene import Reader, Scene, place_of, policy_line
from engine.document import load_path
from engine.document.fields import check_values
from engine.document.model import Process
from tests.demo.demo_support import SAMPLES
from tests.demo.walk_support import PEOPLE, Walked, Walker

RELATIONS = Relations.load(SAMPLES / "demo-relations.toml")
PROCESSES: dict[str, Process] = {
    p.name: p for folder in sorted(SAMPLES.iterdir()) if folder.is_dir() and (p := load_path(folder).process)
}
START = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


def test_the_shipped_relations_fit_the_sample_processes() -> None:
    assert RELATIONS.problems(PROCESSES) == []
    assert {name for name, _ in RELATIONS.fields} == set(PROCESSES), "every sample process is described"


def walk(name: str, seed: int, misjudge: bool, reject: bool, late: bool) -> Walked:
    return Walker(PROCESSES[name], RELATIONS, seed, misjudge, reject, late, START).walk()


@settings(
    max_examples=1000,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    name=st.sampled_from(sorted(PROCESSES)),
    seed=st.integers(0, 2**32),
    misjudge=st.booleans(),
    reject=st.booleans(),
    late=st.booleans(),
)
def test_a_thousand_generated_runs_keep_every_invariant(
    name: str, seed: int, misjudge: bool, reject: bool, late: bool
) -> None:
    walked = walk(name, seed, misjudge, reject, late)
    assert engine_refusals(walked) == []
    assert broken_rules(walked) == []
    assert routes_against_conditions(walked) == []
    assert times_out_of_order(walked) == []
    for check in STORY.get(name, ()):
        check(walked)


def engine_refusals(walked: Walked) -> list[str]:
    """What the engine's own field check would refuse: inputs, and each step's current output."""
    process = walked.process
    found = [str(i) for i in check_values(process.inputs, walked.data["inputs"], "inputs")]
    for step in process.steps:
        record = walked.data["steps"].get(step.id) or {}
        if step.output is not None and "output" in record:
            found += [str(i) for i in check_values(step.output, record["output"], f"steps.{step.id}")]
    persons = [v for f in process.inputs if f.type == "person" and (v := walked.data["inputs"].get(f.name))]
    found += [f"person {p} is nobody the org knows" for p in persons if p not in PEOPLE]
    return found


def broken_rules(walked: Walked) -> list[str]:
    """Every field the relations file describes: the value satisfies the rule that applied.

    A rule with a `chance` may or may not have been taken, so the value must satisfy one of: the
    first rule without a chance whose `when` holds, or a chance rule before it whose `when` holds.
    """
    found: list[str] = []
    data = walked.data
    for (process, place), rules in RELATIONS.fields.items():
        if process != walked.process.name:
            continue
        values = data["inputs"] if place == "inputs" else _current_output(data, place)
        if values is None:
            continue
        worked = [at for sid, at in walked.order if place == place_of(sid)]
        scene_reader = Reader(_scene(walked, worked[-1] if worked else START), place, values)
        for name, field_rules in rules.items():
            candidates = _candidates(field_rules, scene_reader)
            problems = [_problems(rule, name, values, scene_reader) for rule in candidates]
            if candidates and all(problems):
                found.append(f"{place}.{name} = {values.get(name)!r}: {problems[0]}")
    return found


def _current_output(data: dict[str, Any], place: str) -> dict[str, Any] | None:
    record = data["steps"].get(place.removeprefix("steps.").removesuffix(".output")) or {}
    output = record.get("output")
    return output if isinstance(output, dict) else None


def _scene(walked: Walked, now: datetime = START) -> Scene:
    """The run as the checks read it, at the time its step was worked (`now` in a bound)."""
    return Scene(walked.process.name, "check", now, walked.data, walked.process.body, PEOPLE, RELATIONS)


def _candidates(rules: tuple[Rule, ...], reader: Reader) -> list[Rule]:
    """The rules that may have applied; an empty rule (anything goes) when every one was a chance."""
    found: list[Rule] = []
    for rule in rules:
        if rule.when is not None and not rule.when.holds(reader):
            continue
        found.append(rule)
        if rule.chance >= 1:
            return found
    return [*found, Rule()] if found else found


def _problems(rule: Rule, name: str, values: dict[str, Any], reader: Reader) -> str:
    """What about `values[name]` breaks `rule` ("" when nothing does)."""
    present = name in values
    if rule.present is not None and present != rule.present:
        return f"present should be {rule.present}"
    if not present:
        return ""
    value = as_time(values[name])
    if rule.equals is not None and not rule.equals.draws:
        wanted = as_time(rule.equals.evaluate(reader))
        if wanted is not None and not _same(value, wanted):
            return f"equals {rule.equals.text} = {wanted!r}"
    if rule.values is not None and values[name] not in rule.values:
        return f"not one of {list(rule.values)}"
    for bound, ok in ((rule.at_least, lambda v, b: v >= b), (rule.at_most, lambda v, b: v <= b)):
        for expr in bound:
            limit = expr.evaluate(reader)
            if limit is not None and not _holds(ok, value, as_time(limit)):
                return f"bound {expr.text} = {limit!r}"
    return ""


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(b, datetime) and isinstance(a, date) and not isinstance(a, datetime):
        return a == b.date()
    return bool(a == b)


def _holds(ok: Callable[[Any, Any], bool], value: Any, limit: Any) -> bool:
    if isinstance(value, date) and not isinstance(value, datetime) and isinstance(limit, datetime):
        limit = limit.date()
    if isinstance(limit, date) and not isinstance(limit, datetime) and isinstance(value, datetime):
        value = value.date()
    return ok(value, limit)


def routes_against_conditions(walked: Walked) -> list[str]:
    """The route each step took is the first whose declared condition holds on its output."""
    found: list[str] = []
    for step_id, taken in walked.routes.items():
        words = RELATIONS.step(walked.process.name, step_id)
        output = _current_output(walked.data, place_of(step_id))
        if not words.routes or output is None:
            continue
        reader = Reader(_scene(walked), place_of(step_id), output)
        first = next((to for to, cond in words.routes.items() if cond.holds(reader)), None)
        if first != taken:
            found.append(f"{step_id}: took {taken}, the output leads to {first}")
    return found


def times_out_of_order(walked: Walked) -> list[str]:
    """Every time a step records is no earlier than the run's start nor than the steps before it,
    and no later than the moment the step was worked."""
    found: list[str] = []
    latest = walked.started
    for step_id, at in walked.order:
        record = walked.data["steps"].get(step_id) or {}
        for name, value in (record.get("output") or {}).items():
            when = as_time(value) if isinstance(value, str) and value.endswith("Z") else None
            if isinstance(when, datetime) and name.endswith(("At", "Start")) and when < walked.started:
                found.append(f"{step_id}.{name} {value} is before the run started")
        if at < latest:
            found.append(f"{step_id} worked at {at} before an earlier step")
        latest = at
    return found


def value(walked: Walked, path: str) -> Any:
    return lookup(walked.data, tuple(path.split(".")))


def refund_story(w: Walked) -> None:
    requested = value(w, "inputs.requestedAmount")
    total = value(w, "steps.verify_order.output.orderTotal")
    approved = value(w, "steps.verify_order.output.approvedAmount")
    eligible = value(w, "steps.verify_order.output.eligible")
    assert requested <= total, "the customer asks for at most the order total"
    assert 0 <= approved <= min(requested, total), "a refund never exceeds the order or the request"
    assert (approved == 0) is (not eligible)
    reason = value(w, "inputs.reason")
    clause = value(w, "steps.verify_order.output.policyClause")
    assert clause == policy_line({"reason": reason}, w.process.body, "Refund policy") and reason in clause
    order = value(w, "inputs.orderId")
    assert f"order {order}" in value(w, "steps.verify_order.output.decisionSummary")
    if (refunded := value(w, "steps.issue_refund.output.refundedAmount")) is not None:
        assert refunded == approved
    first = value(w, "inputs.customerEmail").split(".")[0].capitalize()
    for step in ("notify_customer", "send_decline"):
        if (reply := value(w, f"steps.{step}.output.replyExcerpt")) is not None:
            assert reply.startswith(f"Hi {first},") and f"order {order}" in reply


def laptop_story(w: Walked) -> None:
    name = value(w, "inputs.newHireName")
    assert value(w, "inputs.workEmail") == name.lower().replace(" ", ".") + "@example.com"
    start = date.fromisoformat(value(w, "inputs.startDate"))
    assert start > START.date()
    if (sent := value(w, "steps.send_welcome.output.guideSentTo")) is not None:
        assert sent == value(w, "inputs.personalEmail")
    if (eta := value(w, "steps.book_courier.output.estimatedDelivery")) is not None:
        assert date.fromisoformat(eta) < start, "the laptop arrives before the first day"
    if (active := value(w, "steps.create_accounts.output.activationDate")) is not None:
        assert active == value(w, "inputs.startDate")
    monitor = "27-inch monitor" in (value(w, "steps.choose_hardware.output.accessories") or [])
    if value(w, "steps.choose_hardware.output.accessories") is not None:
        assert monitor is bool(value(w, "inputs.needsMonitor"))


def deletion_story(w: Walked) -> None:
    assert as_time(value(w, "inputs.receivedAt")) <= START, "a request is received before it is handled"
    found = value(w, "steps.locate_data.output.recordsFound")
    if found is None:
        return
    assert value(w, "steps.locate_data.output.totalRecords") == sum(r["recordCount"] for r in found)
    if (deleted := value(w, "steps.delete_data.output.deletedFrom")) is not None:
        assert deleted == [r["system"] for r in found], "deleted from every system the data map found"


def claim_story(w: Walked) -> None:
    assert date.fromisoformat(value(w, "inputs.lossDate")) < START.date(), "a loss comes before its claim"
    prefix = {"auto": "AU-", "home": "HO-", "travel": "TR-"}[value(w, "inputs.claimType")]
    assert value(w, "inputs.policyNumber").startswith(prefix)
    assert value(w, "inputs.claimantEmail").startswith(value(w, "inputs.claimantName").split()[0].lower())
    if (reserve := value(w, "steps.assign_adjuster.output.reserveAmount")) is not None:
        assert reserve <= value(w, "steps.triage.output.coverageLimit")


def offer_story(w: Walked) -> None:
    band = (
        value(w, "steps.benchmark_offer.output.bandMin"),
        value(w, "steps.benchmark_offer.output.bandMax"),
    )
    salary = value(w, "inputs.proposedSalary")
    if band[0] is not None:
        assert band[0] < band[1]
        assert value(w, "steps.benchmark_offer.output.withinBand") is (band[0] <= salary <= band[1])
    if (expires := value(w, "steps.prepare_offer.output.expiresOn")) is not None:
        assert expires < value(w, "inputs.startDate"), "an offer expires before the start date"


def purchase_story(w: Walked) -> None:
    items = value(w, "inputs.lineItems")
    assert value(w, "inputs.amount") == round(sum(i["quantity"] * i["unitPrice"] for i in items), 2)
    within = value(w, "steps.review_request.output.withinBudget")
    if within is not None:
        budget = value(w, "steps.review_request.output.budgetRemaining")
        assert (budget >= value(w, "inputs.amount")) is within


def release_story(w: Walked) -> None:
    healthy = value(w, "steps.verify_canary.output.healthy")
    if healthy is not None:
        canary = value(w, "steps.verify_canary.output.canaryErrorPct")
        stable = value(w, "steps.verify_canary.output.stableErrorPct")
        assert (canary - stable <= 0.5) is healthy, "healthy means within half a point of stable"


STORY: dict[str, tuple[Callable[[Walked], None], ...]] = {
    "customer-refund": (refund_story,),
    "new-hire-laptop": (laptop_story,),
    "data-deletion-request": (deletion_story,),
    "insurance-claim-intake": (claim_story,),
    "job-offer-approval": (offer_story,),
    "purchase-order-approval": (purchase_story,),
    "production-change-release": (release_story,),
}


def test_a_rework_changes_what_the_rejection_names_and_keeps_the_rest() -> None:
    for seed in range(40):
        walked = walk("purchase-order-approval", seed, False, True, False)
        record = walked.data["steps"]["review_request"]
        if walked.rejected != "finance_approval" or not record.get("history"):
            continue
        before, after = record["history"][-1]["output"], record["output"]
        changed = {k for k in after if before.get(k) != after.get(k)}
        assert "budgetRemaining" in changed, "the note names the budget: the rework draws it anew"
        assert changed <= {"budgetRemaining", "withinBudget", "reviewNotes", "vendorId", "vendorActive"}
        return
    raise AssertionError("no seed of 40 rejected the purchase order")


def test_an_expression_in_the_file_reads_only_what_a_run_has() -> None:
    """Every path an expression of the file reads is an input, a step output, a sibling field or now."""
    for (process, place), rules in RELATIONS.fields.items():
        p = PROCESSES[process]
        inputs = {f.name for f in p.inputs}
        outputs = {(s.id, f.name) for s in p.steps for f in s.output or ()}
        siblings = (
            {f.name for f in p.inputs}
            if place == "inputs"
            else {f.name for s in p.steps if place_of(s.id) == place for f in s.output or ()}
        )
        for name, field_rules in rules.items():
            for rule in field_rules:
                for expr in _exprs(rule):
                    for path in expr.paths:
                        ok = (
                            path == ("now",)
                            or (path[0] == "inputs" and path[1] in inputs)
                            or (path[0] == "steps" and (path[1], path[3]) in outputs and path[2] == "output")
                            or path[0] in siblings
                        )
                        assert ok, f"{process}.{place}.{name}: {expr.text} reads {'.'.join(path)}"


def _exprs(rule: Rule) -> list[Expr]:
    from demo.world.expr import placeholders

    found = [e for e in (rule.when, rule.equals) if e is not None] + [*rule.at_least, *rule.at_most]
    for template in rule.text or ():
        found += placeholders(template)
    if isinstance(rule.item, Expr):
        found.append(rule.item)
    elif isinstance(rule.item, dict):
        found += rule.item.values()
    if isinstance(rule.count, Expr):
        found.append(rule.count)
    return found
