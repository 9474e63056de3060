"""The demo org, the sample processes published into it (with the scripted evaluator, all ten), the
stream of runs with its showcase of check paths, and the outcome rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.embedded.samples import publish_samples
from console.resources import bundled
from demo.stories.stream import SHOWCASE_FIRST, RunStarter, allowed_outcomes, scripted_showcase
from demo.system import DemoSettings
from demo.world.org import AGENT_NAMES, EVENT_FEED, GUEST_AGENT, OPERATOR, REQUESTERS, ROLES, build_demo_org
from engine.clock import ManualClock
from engine.core import Engine
from engine.document import load_path
from engine.document.model import Process
from engine.evaluator import CheckConfig
from engine.identity import Identity
from tests.demo.demo_support import SAMPLES

NEED_CHECK = {"content-moderation-appeal", "customer-refund", "data-deletion-request"}
ALL = {p.name for p in SAMPLES.iterdir() if p.is_dir()}
ANSWERS = SAMPLES / "check-answers.toml"
SHOWCASE = [
    ("customer-refund", {"reason": "damaged"}),
    ("customer-refund", {"reason": "wrong_item"}),
    ("customer-refund", {"reason": "duplicate_charge"}),
    ("customer-refund", {"reason": "not_received"}),
    ("customer-refund", {"reason": "changed_mind"}),
    ("data-deletion-request", {"jurisdiction": "other"}),
    ("content-moderation-appeal", {"originalAction": "account_suspended"}),
]


def load(name: str) -> Process:
    process = load_path(SAMPLES / name).process
    assert process is not None
    return process


def test_the_demo_org_has_a_group_per_role_an_operator_in_each_and_a_token_for_everyone() -> None:
    demo = build_demo_org(4, lease_seconds=900, token=iter(f"token-{i:03}" for i in range(100)).__next__)
    org = demo.org
    assert sorted(org.groups) == sorted(ROLES)
    assert all(OPERATOR in members and len(members) == 2 for members in org.groups.values())
    assert demo.agents == AGENT_NAMES[:4]
    assert sorted(org.agents) == sorted([*AGENT_NAMES[:4], EVENT_FEED, GUEST_AGENT])
    assert org.operators() == [OPERATOR]
    assert org.server.lease_seconds == 900
    for who, token in demo.tokens.items():
        identity = org.identity_for_token(token)
        assert identity is not None and identity.id == who
    assert demo.own_groups(OPERATOR) == []
    assert demo.own_groups("fiona@example.com") == ["finance-approver"]
    assert demo.person_pool == (*REQUESTERS, OPERATOR)
    with pytest.raises(ValueError, match="agents must be between 1 and 6"):
        build_demo_org(7)


def test_allowed_outcomes_are_the_finishes_plus_failed() -> None:
    found = {}
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        process = load_path(folder).process
        assert process is not None
        found[process.name] = sorted(allowed_outcomes(process))
    assert found == {
        "content-moderation-appeal": ["failed", "reversed", "upheld"],
        "customer-refund": ["declined", "failed", "refunded"],
        "data-deletion-request": ["deleted", "failed", "refused", "unverified"],
        "insurance-claim-intake": ["accepted", "declined", "failed", "incomplete"],
        "job-offer-approval": ["failed", "hired", "offer_declined"],
        "new-hire-laptop": ["delivery_failed", "failed", "ready_for_day_one"],
        "production-change-release": ["blocked", "failed", "released", "rolled_back"],
        "purchase-order-approval": ["failed", "issued"],
        "security-access-review": ["certified", "failed"],
        "vendor-contract-renewal": ["failed", "renewed", "terminated"],
    }


def test_an_approval_without_on_reject_allows_rejected(tmp_path: Path) -> None:
    folder = tmp_path / "quick"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(
        "---\nname: quick\ndescription: One approval.\nsteps:\n"
        "  - id: ok\n    person: boss\n    approve: Approve it.\n    next: done\n"
        "  - id: done\n    finish: approved\n---\n\nBody.\n"
    )
    process = load_path(folder).process
    assert process is not None
    assert sorted(allowed_outcomes(process)) == ["approved", "failed", "rejected"]


async def test_without_an_evaluator_the_processes_with_a_check_are_refused(tmp_path: Path) -> None:
    engine = await Engine.open(tmp_path / "data", build_demo_org().org, clock=ManualClock())
    try:
        published, refused = await publish_samples(engine, SAMPLES)
        assert (engine.profiles, sorted(refused)) == (("parallel-1",), sorted(NEED_CHECK))
        assert all(issues == ["profile check-1: not offered by this server"] for issues in refused.values())
        assert sorted(published) == sorted(ALL - NEED_CHECK)
    finally:
        await engine.close()


def test_the_showcase_is_one_run_per_input_condition_of_the_scripted_answers(tmp_path: Path) -> None:
    processes = {name: load(name) for name in ALL}
    assert scripted_showcase(ANSWERS, processes) == SHOWCASE
    odd = tmp_path / "answers.toml"
    odd.write_text(
        "\n".join(
            f'[[answer]]\nprocess = "{process}"\nstep = "s"\nask = "q"\nyes = 0.1\nwhen = {when}\n'
            for process, when in (
                ("customer-refund", '{ inputs = { reason = "damaged" } }'),
                ("customer-refund", '{ inputs = { reason = "damaged" }, output = { eligible = true } }'),
                ("customer-refund", '{ inputs = { reason = "stolen" } }'),
                ("customer-refund", '{ inputs = { mood = "angry" } }'),
                ("customer-refund", "{ output = { eligible = false } }"),
                ("not-published", '{ inputs = { reason = "damaged" } }'),
            )
        )
    )
    assert scripted_showcase(odd, processes) == [("customer-refund", {"reason": "damaged"})]


async def test_the_samples_publish_and_the_first_round_shows_every_process_and_check_path(
    tmp_path: Path,
) -> None:
    demo = build_demo_org(check_answers=ANSWERS)
    engine = await Engine.open(tmp_path / "data", demo.org, clock=ManualClock())
    try:
        published, refused = await publish_samples(engine, SAMPLES)
        assert (engine.profiles, refused, sorted(published)) == (("parallel-1", "check-1"), {}, sorted(ALL))
        starter = RunStarter(
            engine,
            published,
            starters=[Identity("person", who) for who in REQUESTERS],
            people=demo.person_pool,
            test_share=0.5,
            seed=4,
            showcase=scripted_showcase(ANSWERS, published),
        )
        now = engine.clock.now()
        first = len(SHOWCASE_FIRST) + len(SHOWCASE) + 4
        for _ in range(first + len(published)):
            assert await starter.start_one(now) is not None, starter.refused
        names = [s.process for s in starter.started]
        assert names[: len(SHOWCASE_FIRST)] == list(SHOWCASE_FIRST)
        assert names[len(SHOWCASE_FIRST) : len(SHOWCASE_FIRST) + len(SHOWCASE)] == [n for n, _ in SHOWCASE]
        assert set(names[:first]) == ALL and len(names[:first]) == first
        assert sorted(names[first:]) == sorted(published)
        operator = Identity("person", OPERATOR, operator=True)
        for started, (_name, given) in zip(starter.started[len(SHOWCASE_FIRST) :], SHOWCASE, strict=False):
            inputs = (await engine.call(operator, "get_run", {"runId": started.run_id}))["data"]["data"][
                "inputs"
            ]
            assert {k: inputs[k] for k in given} == given
        assert {s.mode for s in starter.started} == {"live", "test"}
        assert starter.refused == []
    finally:
        await engine.close()


def test_the_demo_reads_the_answers_file_beside_the_samples_when_there_is_one(tmp_path: Path) -> None:
    assert DemoSettings().answers == bundled("sample_processes") / "check-answers.toml"
    shipped = DemoSettings().answers
    assert shipped is not None and shipped.resolve() == ANSWERS.resolve(), (
        "the shipped copy of the source file"
    )
    assert DemoSettings(check_answers=None).answers is None
    assert DemoSettings(samples=tmp_path).answers is None, "no file there: no evaluator"
    assert DemoSettings(samples=tmp_path, check_answers=ANSWERS).answers == ANSWERS
    assert build_demo_org(check_answers=ANSWERS).org.check == CheckConfig("scripted", answers=ANSWERS)
    assert build_demo_org().org.check == CheckConfig()
