"""The relations file: every mistake refused at load with its place, checked against the processes,
and `settle`'s rules (the first rule that applies, bounds, presence, fixed and fresh values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from demo.world.relations import Relations, RelationsError, load_relations
from demo.world.scene import Scene, settle
from engine.document import load_path
from engine.document.fields import parse_fields
from tests.demo.demo_support import NOW, SAMPLES


def relations(text: str, tmp_path: Path) -> Relations:
    path = tmp_path / "demo-relations.toml"
    path.write_text(text)
    return Relations.load(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1", "x: expected a table"),
        ("[p.outputs]", "p: unknown key 'outputs' (known: inputs, steps)"),
        (
            "[p.steps.s]\nroute = {}",
            "p.steps.s: unknown key 'route' (known: escalate, output, reject, routes)",
        ),
        ("[p.inputs.a]\nequal = '1'", "p.inputs.a: unknown key 'equal'"),
        ("[p.inputs.a]\nequals = '1 +'", "p.inputs.a.equals: '1 +': not an expression"),
        ("[p.inputs.a]\nequals = 'open(x)'", "p.inputs.a.equals: 'open(x)': unknown function 'open'"),
        ("[p.inputs.a]\nequals = '1'\nvalues = [1]", "p.inputs.a: equals and values both give the value"),
        ("[p.inputs.a]\nchance = 1.5", "p.inputs.a.chance: expected a number above 0 and at most 1"),
        ("[p.inputs.a]\ncount = [3, 1]", "p.inputs.a.count: expected [least, most]"),
        ("[p.inputs.a]\ntext = 'one'", "p.inputs.a.text: expected a list of text templates"),
        ("[p.inputs.a]\ntext = ['{x']", "p.inputs.a.text[0]: '{x': a '{' is never closed"),
        ("[[p.inputs.a]]\nwhen = 'x'\n[[p.inputs.a]]\nat_most = 'y z'", "p.inputs.a[1].at_most: 'y z'"),
        ("[p.inputs]\na = 3", "p.inputs.a: expected a table, or an array of tables, of rules"),
        ("[p.steps.s]\nescalate = []", "p.steps.s.escalate: expected a list of text templates"),
        ("[p\n", "not TOML"),
    ],
)
def test_a_mistake_is_refused_with_its_place(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(RelationsError) as raised:
        relations(text, tmp_path)
    assert str(raised.value).startswith(f"{tmp_path / 'demo-relations.toml'}: ")
    assert message in str(raised.value)


def test_without_a_file_there_are_no_relations(tmp_path: Path) -> None:
    assert load_relations(tmp_path) == Relations()
    assert load_relations(SAMPLES).knows("customer-refund") is True


def test_problems_name_what_the_processes_do_not_have(tmp_path: Path) -> None:
    found = relations(
        """
[customer-refund.inputs.orderNumber]
text = ["x"]
[customer-refund.steps.lead_approval.output.x]
equals = "1"
[customer-refund.steps.verify_order]
routes = { issue_refund = "eligible", refund_now = "true" }
[customer-refund.steps.issue_refund]
reject = ["no"]
[customer-refund.steps.issue_refund.output.refundedAmount]
misjudge = true
[nowhere.inputs.a]
equals = "1"
[customer-refund.steps.gone]
escalate = ["x"]
""",
        tmp_path,
    )
    process = load_path(SAMPLES / "customer-refund").process
    assert process is not None
    assert found.problems({"customer-refund": process}) == [
        "customer-refund.inputs.orderNumber: not a declared field",
        "customer-refund.steps.gone: no such step",
        "customer-refund.steps.issue_refund.output.refundedAmount: misjudge on a step without a check "
        "(nothing would catch it)",
        "customer-refund.steps.issue_refund.reject: the step is not an approval",
        "customer-refund.steps.lead_approval.output: no such step, or it has no output",
        "customer-refund.steps.verify_order.routes.refund_now: not a route of the step",
        "customer-refund.steps.verify_order.routes: no condition for lead_approval, send_decline",
        "nowhere: no such process",
    ]


FIELDS, _ = parse_fields(
    {
        "total": "number",
        "amount": "number",
        "ok": "boolean",
        "note": {"type": "string", "optional": True},
        "due": "date",
        "items": {"type": "list", "items": "string"},
    },
    "output",
)


def settled(rules: str, tmp_path: Path, given: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    scene = Scene("p", "7:r", NOW, {"inputs": {"asked": 80.0}}, "", (), relations(rules, tmp_path))
    return settle(FIELDS, scene, "steps.s.output", given, **kw)


def test_the_first_rule_that_applies_decides_and_its_bounds_hold(tmp_path: Path) -> None:
    rules = """
[p.steps.s.output.ok]
equals = "total > 100"
[[p.steps.s.output.amount]]
when = "not ok"
equals = "0"
[[p.steps.s.output.amount]]
at_least = "10"
at_most = "min(asked, total)"
[p.steps.s.output.total]
at_least = "50"
at_most = "150"
[[p.steps.s.output.note]]
when = "ok"
present = true
text = ["Approved {money(amount)} of {money(total)} for {inputs.asked}"]
[[p.steps.s.output.note]]
present = false
[p.steps.s.output.due]
at_least = "date(now) + days(2)"
at_most = "date(now) + days(2)"
[p.steps.s.output.items]
count = [3, 3]
item = "pick('a', 'b', 'c', 'd')"
"""
    for seed in range(30):
        scene = Scene("p", f"{seed}", NOW, {"inputs": {"asked": 80.0}}, "", (), relations(rules, tmp_path))
        out = settle(FIELDS, scene, "steps.s.output")
        assert 50 <= out["total"] <= 150
        assert out["ok"] is (out["total"] > 100)
        if out["ok"]:
            assert 10 <= out["amount"] <= 80.0
            assert out["note"] == f"Approved {out['amount']:,.2f} of {out['total']:,.2f} for 80"
        else:
            assert out["amount"] == 0 and "note" not in out
        assert out["due"] == "2026-10-08"
        assert len(out["items"]) == 3 and len(set(out["items"])) == 3, "items are each different"
        assert list(out) == [f.name for f in FIELDS if f.name in out], "declared order"


def test_a_run_draws_the_same_facts_every_time_and_a_fresh_field_anew(tmp_path: Path) -> None:
    rules = "[p.steps.s.output.total]\nat_least = '50'\nat_most = '150'\n"
    first = settled(rules, tmp_path)
    assert settled(rules, tmp_path) == first, "seeded by the run and the field's place"
    fresh = settled(rules, tmp_path, first, fresh={"total": "rework 1"})
    assert fresh["total"] != first["total"] and 50 <= fresh["total"] <= 150
    assert {k: v for k, v in fresh.items() if k != "total"} == {
        k: v for k, v in first.items() if k != "total"
    }


def test_a_given_value_stays_unless_its_rule_gives_it_and_a_fixed_one_always(tmp_path: Path) -> None:
    rules = """
[p.steps.s.output.ok]
equals = "total > 100"
[p.steps.s.output.total]
at_least = "50"
at_most = "150"
"""
    given = {"total": 120.0, "amount": 5, "ok": False, "due": "2026-10-20", "items": ["x"]}
    out = settled(rules, tmp_path, given)
    assert (out["total"], out["amount"], out["ok"]) == (120.0, 5, True), "ok follows from the total again"
    out = settled(rules, tmp_path, given, fixed=["ok"])
    assert out["ok"] is False, "a verdict turned over by a worker stays"
    out = settled(rules, tmp_path, {**given, "total": 900.0})
    assert 50 <= out["total"] <= 150, "a given value outside its bounds is drawn again inside them"


def test_a_value_the_engine_would_refuse_falls_back_to_the_fields_meaning(tmp_path: Path) -> None:
    rules = (
        "[p.steps.s.output.ok]\nequals = 'inputs.missing'\n[p.steps.s.output.total]\nequals = \"'text'\"\n"
    )
    out = settled(rules, tmp_path)
    assert isinstance(out["ok"], bool) and isinstance(out["total"], float)


def test_inputs_read_each_other_in_the_order_they_depend_on(tmp_path: Path) -> None:
    fields, _ = parse_fields({"email": "string", "name": "string"}, "inputs")
    rules = relations(
        "[p.inputs.email]\nequals = \"email_of(inputs.name, 'example.com')\"\n"
        "[p.inputs.name]\nvalues = ['Ana Ruiz']\n",
        tmp_path,
    )
    out = settle(fields, Scene("p", "1", NOW, {"inputs": {}}, "", (), rules), "inputs")
    assert out == {"email": "ana.ruiz@example.com", "name": "Ana Ruiz"}


def test_the_policy_clause_quotes_the_body_line_the_case_falls_under() -> None:
    process = load_path(SAMPLES / "customer-refund").process
    assert process is not None
    shipped = load_relations(SAMPLES)
    step = process.step("verify_order")
    assert step.output is not None
    seen = {}
    for reason in ("damaged", "not_received", "changed_mind"):
        data = {"inputs": {"reason": reason, "requestedAmount": 50.0, "orderId": "10001"}, "steps": {}}
        scene = Scene(process.name, "1:r", NOW, data, process.body, (), shipped)
        seen[reason] = settle(step.output, scene, "steps.verify_order.output")["policyClause"]
    assert seen == {
        "damaged": "Refund policy: damaged, wrong_item, duplicate_charge: refund in full.",
        "not_received": "Refund policy: not_received: refund in full when the carrier shows no delivery "
        "10 days after shipping.",
        "changed_mind": "Refund policy: changed_mind: refund the item price, without shipping, within 30 days "
        "of delivery.",
    }
