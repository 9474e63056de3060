"""A run's document (`Run.to_json`): a step keeps only the fields off their defaults (and `claim`), and
reads back as the same run; a document that spells every field out, as older servers wrote it, reads too."""

from __future__ import annotations

import json

from engine.store.state import Claim, Run, StepRun


def _run() -> Run:
    run = Run("r_1", "p", 1, "live", "a_1", "2026-10-06T09:00:00.000000Z", None, {})
    run.steps = {
        "one": StepRun("done", "2026-10-06T09:00:00.000000Z", entered=1, completed=2, joined=["x"]),
        "two": StepRun("claimed", entered=3, claim=Claim("h", "a_1", "2026-10-06T09:10:00.000000Z")),
        "three": StepRun(handoff={}),
        "four": StepRun(),
    }
    return run


def test_a_step_keeps_only_what_is_off_its_defaults_and_its_claim() -> None:
    steps = json.loads(_run().to_json(data=False))["steps"]
    assert steps == {
        "one": {
            "state": "done",
            "ready_since": "2026-10-06T09:00:00.000000Z",
            "entered": 1,
            "completed": 2,
            "joined": ["x"],
            "claim": None,
        },
        "two": {
            "state": "claimed",
            "entered": 3,
            "claim": {
                "token_hash": "h",
                "by": "a_1",
                "expires_at": "2026-10-06T09:10:00.000000Z",
                "progress": None,
            },
        },
        "three": {"handoff": {}, "claim": None},
        "four": {"claim": None},
    }


def test_the_document_reads_back_as_the_same_run() -> None:
    run = _run()
    again = Run.from_json(run.to_json(data=False))
    assert again == run
    again.steps["four"].joined.append("y")  # a default list of its own, not one shared
    assert Run.from_json(run.to_json(data=False)).steps["four"].joined == []


def test_a_document_with_every_field_spelled_out_reads_the_same() -> None:
    run = _run()
    doc = json.loads(run.to_json(data=False))
    doc["steps"] = {
        sid: {**vars(st), "claim": None if st.claim is None else vars(st.claim)}
        for sid, st in run.steps.items()
    }
    assert Run.from_json(json.dumps(doc)) == run
