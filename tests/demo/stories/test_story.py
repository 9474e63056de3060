"""Scripted stories: each shipped story plays headless, on the injected clock, to its scripted end with
the outcomes it declares, the same way every time; a broken story file is refused with its place."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from demo.cli import main
from demo.fronts.headless import run_story_headless
from demo.stories.story import USERS, StoryError, load_story, parse_story, story_names
from demo.system import DemoSettings

SHIPPED = ["approver", "on-call", "operator-triage"]
RUN_ID = re.compile(r"r_[0-9a-f]{20}")


def test_three_stories_ship_one_per_user() -> None:
    assert story_names() == SHIPPED
    assert sorted(load_story(name).user for name in SHIPPED) == sorted(USERS)


@pytest.mark.parametrize("name", SHIPPED)
async def test_each_story_plays_headless_to_its_end_with_the_outcomes_it_declares(
    name: str, tmp_path: Path
) -> None:
    story = load_story(name)
    out = io.StringIO()
    report = await run_story_headless(story, DemoSettings(data_dir=tmp_path / "demo", port=0), out)
    text = out.getvalue()
    assert report.ok, text
    assert report.failures == []
    assert report.outcomes == {
        e.run: (e.state, e.outcome if e.state == "ended" else None) for e in story.expects
    }
    lines = text.splitlines()
    assert lines[0] == f"apc demo --story {name}: {story.title} (as the {story.user})"
    assert lines[-1].startswith(f"story {name}: {len(story.moments)} moments in ")
    assert lines[-1].endswith(" demo minutes: played to its end with the outcomes it declares")
    for expect in story.expects:
        declared = expect.outcome if expect.state == "ended" else "cancelled"
        assert f"{expect.run}: {declared} (declared {declared}) ok" in lines
    acts = [m for m in story.moments if m.act is not None]
    assert len(
        [line for line in lines if re.search(r": (approve|reject|return|complete|cancel) .*: ok$", line)]
    ) == len(acts), "every act performed once, as the story's user, and accepted"


async def test_a_story_plays_the_same_every_time(tmp_path: Path) -> None:
    story = load_story("on-call")
    played = []
    for i in range(2):
        out = io.StringIO()
        report = await run_story_headless(story, DemoSettings(data_dir=tmp_path / f"demo{i}", port=0), out)
        assert report.ok
        played.append(RUN_ID.sub("r_…", out.getvalue()))
    assert played[0] == played[1], "same moments at the same demo times, apart from the random run ids"


def test_the_cli_lists_and_plays_stories(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--list-stories"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed == [
        "approver         The approver's afternoon (as the approver)",
        "on-call          Night shift: cancel and return (as the on-call)",
        "operator-triage  Refund triage in five minutes (as the operator)",
    ]
    assert main(["--story", "nope", "--headless"]) == 2
    assert capsys.readouterr().err == (
        "apc demo: error: no story named 'nope' (known: approver, on-call, operator-triage)\n"
    )
    assert main(["--story", "approver", "--web"]) == 2
    assert "--story plays its own runs" in capsys.readouterr().err
    assert (
        main(["--story", "operator-triage", "--headless", "--data", str(tmp_path / "d"), "--port", "0"]) == 0
    )
    assert (
        capsys.readouterr().out.splitlines()[-1].endswith("played to its end with the outcomes it declares")
    )


BASE = {"title": "T", "user": "operator", "description": "D"}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({**BASE, "user": "boss"}, "user: expected one of operator, approver, on-call"),
        ({**BASE, "plot": 1, "moment": []}, "story: unknown key 'plot'"),
        (BASE, "moment: expected an array of tables ([[moment]])"),
        ({**BASE, "moment": [{"stage": "escalation"}]}, "moment[0].name: every moment has a name"),
        ({**BASE, "moment": [{"name": "a", "stage": "party"}]}, "moment 'a'.stage: no stage moment 'party'"),
        (
            {**BASE, "moment": [{"name": "a", "stage": "escalation", "act": "approve"}]},
            "moment 'a': give exactly one of stage, start or act",
        ),
        (
            {**BASE, "moment": [{"name": "a", "act": "approve", "on": "b", "step": "s"}]},
            "moment 'a'.on: no earlier moment 'b' that starts a run",
        ),
        (
            {
                **BASE,
                "moment": [{"name": "a", "stage": "escalation"}, {"name": "b", "act": "reject", "on": "a"}],
            },
            "moment 'b'.note: a reject needs its note",
        ),
        (
            {**BASE, "moment": [{"name": "a", "stage": "escalation", "at": "soon"}]},
            "moment 'a'.at: expected a duration such as 90s, 5m or 2h",
        ),
        (
            {**BASE, "moment": [{"name": "a", "start": {"process": "p", "cues": {"s": {"fate": "nap"}}}}]},
            "moment 'a'.start.cues.s.fate: expected one of normal, escalate, misjudge, incomplete, lapse",
        ),
        (
            {**BASE, "moment": [{"name": "a", "stage": "escalation"}], "expect": [{"run": "a"}]},
            "expect[0].outcome: a run expected to end declares its outcome",
        ),
        (
            {
                **BASE,
                "moment": [{"name": "a", "stage": "escalation"}],
                "expect": [{"run": "x", "outcome": "o"}],
            },
            "expect 'x': no moment 'x' that starts a run",
        ),
    ],
)
def test_a_broken_story_is_refused_with_its_place(doc: dict[str, object], message: str) -> None:
    with pytest.raises(StoryError) as raised:
        parse_story("s", doc)
    assert str(raised.value).startswith(message)
