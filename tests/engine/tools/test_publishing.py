"""Publishing (spec §7, §6 rule 5): checked, bound, numbered, immutable; runs pin their version."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import document
from engine.core import Engine
from engine.tools import reads
from engine.tools.catalog import draft
from tests.engine.engine_support import (
    FIXTURES,
    MIRA,
    SAMPLES,
    SCREENER,
    THREE_AGENTS,
    call,
    make_org,
    ok,
    publish,
    start,
)

pytestmark = pytest.mark.both_stores

FIXTURE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
SAMPLE_DIRS = sorted(p for p in SAMPLES.iterdir() if (p / "PROCESS.md").is_file())


def bind_all(folder: Path) -> dict[str, str]:
    loaded = document.load_path(folder)
    assert loaded.process is not None, [str(i) for i in loaded.issues]
    return {role: "g_finance" for role in loaded.process.roles}


async def test_every_fixture_publishes_except_the_check_profile_one(engine: Engine) -> None:
    assert len(FIXTURE_DIRS) == 12
    results = {folder.name: await engine.publish(folder, bind_all(folder)) for folder in FIXTURE_DIRS}
    refused = {name: r.issues for name, r in results.items() if not r.ok}
    assert refused == {"vendor-check": ["profile check-1: not offered by this server"]}
    assert all((r.version, r.created) == (1, True) for name, r in results.items() if name != "vendor-check")
    listed = ok(await call(engine, MIRA, "list_processes"), "list_processes")
    assert [i["name"] for i in listed["items"]] == sorted(set(results) - {"vendor-check"})


@pytest.mark.parametrize("folder", SAMPLE_DIRS, ids=[p.name for p in SAMPLE_DIRS])
async def test_every_sample_process_publishes(engine: Engine, folder: Path) -> None:
    """A sample needing a profile this engine lacks is refused with exactly that issue."""
    missing = sorted(document.load_path(folder).profiles - set(engine.profiles))
    result = await engine.publish(folder, bind_all(folder))
    if missing:
        expected = [f"profile {p}: not offered by this server" for p in missing]
        assert (result.ok, result.issues) == (False, expected)
    else:
        assert (result.ok, result.issues, result.name, result.version) == (True, [], folder.name, 1)


async def test_republishing_identical_content_creates_no_version_and_runs_pin_theirs(
    engine: Engine, tmp_path: Path
) -> None:
    await publish(engine, tmp_path, THREE_AGENTS)
    folder = tmp_path / "processes" / "three-agents"
    same = await engine.publish(folder, {})
    assert (same.ok, same.version, same.created) == (True, 1, False)
    old_run = (await start(engine, "three-agents", {"ticket": "A"}))["run"]["id"]
    text = (folder / "PROCESS.md").read_text().replace("Do the first thing.", "Do the first thing well.")
    (folder / "PROCESS.md").write_text(text)
    changed = await engine.publish(folder, {})
    assert (changed.ok, changed.version, changed.created) == (True, 2, True)
    new_run = await start(engine, "three-agents", {"ticket": "B"})
    assert new_run["run"]["version"] == 2
    pinned = ok(await call(engine, MIRA, "get_run", runId=old_run), "get_run")
    assert pinned["run"]["version"] == 1
    assert (await _instructions(engine, old_run), await _instructions(engine, new_run["run"]["id"])) == (
        "Do the first thing.",
        "Do the first thing well.",
    )
    older = await start(engine, "three-agents", {"ticket": "C"}, version=1)
    assert older["run"]["version"] == 1
    listed = ok(await call(engine, MIRA, "list_processes"), "list_processes")
    assert [(i["name"], i["version"]) for i in listed["items"]] == [("three-agents", 2)]


async def _instructions(engine: Engine, run_id: str) -> str:
    data = ok(await call(engine, SCREENER, "claim", runId=run_id, stepId="one"), "claim")
    return data["step"]["instructions"]


async def test_publishing_refuses_with_every_issue(engine: Engine, tmp_path: Path) -> None:
    folder = tmp_path / "bad-one"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(
        "---\nname: other-name\ndescription: d\nsteps:\n  - id: a\n    agent: x\n    next: nowhere\n---\n"
    )
    result = await engine.publish(folder, {})
    assert not result.ok and not result.created and result.version is None
    assert result.issues == [str(i) for i in document.load_path(folder).issues]
    assert len(result.issues) >= 2
    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "PROCESS.md").write_text(
        "---\nname: roles\ndescription: d\nsteps:\n"
        "  - id: a\n    person: approver\n    approve: ok?\n"
        "  - id: b\n    person: reviewer\n    task: do\n"
        "  - id: done\n    finish: done\n---\n"
    )
    result = await engine.publish(roles, {"reviewer": "g_nope", "stranger": "g_finance"})
    assert result.issues == [
        "bind.approver: required, the group that works role 'approver'",
        "bind.reviewer: unknown group 'g_nope'",
        "bind.stranger: not a role of this process",
    ]
    assert ok(await call(engine, MIRA, "list_processes"), "list_processes")["items"] == []


def test_a_process_needing_a_tool_not_offered_is_refused() -> None:
    folder = FIXTURES / "customer-offboarding"
    checked, issues = draft(folder, bind_all(folder), make_org(), ("parallel-1",), ("describe", "decide"))
    assert checked is None
    assert issues == [
        "tool send_event: needed by steps.settlement_event, not offered by this server",
    ]
    folder = FIXTURES / "supplier-rfp"
    _checked, issues = draft(folder, bind_all(folder), make_org(), ("parallel-1",), ("decide",))
    assert issues == ["tool upload: needed by steps.collect_quotes.evidence, not offered by this server"]
    folder = FIXTURES / "major-incident"
    _checked, issues = draft(folder, bind_all(folder), make_org(), (), ("decide",))
    assert issues == ["profile parallel-1: not offered by this server"]


async def test_list_processes_pages_and_shows_inputs_and_requires(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reads, "PROCESS_PAGE", 1)
    await publish(engine, tmp_path, THREE_AGENTS)
    await publish(
        engine,
        tmp_path,
        """
        ---
        name: needs-crm
        description: Uses the CRM.
        inputs:
          account: { type: string, description: The account id }
        requires: { systems: [salesforce] }
        steps:
          - id: a
            agent: Update the account.
          - id: done
            finish: done
        ---
        """,
    )
    first = ok(await call(engine, MIRA, "list_processes"), "list_processes")
    assert first["items"] == [
        {
            "name": "needs-crm",
            "description": "Uses the CRM.",
            "version": 1,
            "inputs": {"account": {"type": "string", "description": "The account id"}},
            "requires": {"systems": ["salesforce"]},
        }
    ]
    second = ok(await call(engine, MIRA, "list_processes", cursor=first["nextCursor"]), "list_processes")
    assert second == {
        "items": [
            {
                "name": "three-agents",
                "description": "Three agent steps in a row.",
                "version": 1,
                "inputs": {"ticket": "string"},
            }
        ],
        "nextCursor": None,
    }


async def test_a_document_with_warnings_publishes_and_the_result_lists_them(
    engine: Engine, tmp_path: Path
) -> None:
    folder = tmp_path / "warned"
    folder.mkdir()
    (folder / "PROCESS.md").write_text(
        "---\nname: warned\ndescription: A demo process.\nsteps:\n"
        "  - id: work\n    agent: Do it.\n    evidence: [link, link]\n"
        "  - id: done\n    finish: done\n---\n"
    )
    result = await engine.publish(folder, {})
    assert (result.ok, result.name, result.version, result.created, result.issues) == (
        True,
        "warned",
        1,
        True,
        [],
    )
    assert result.warnings == ["steps.work.evidence[1]: 'link' is listed twice"]
