"""Helpers for the endpoint tests: the org, the process they run, and schema checks of every envelope.

The org and the envelope checks come from tests/support. Import with
`from tests.engine.http.http_support import ...`; the fixtures (`engine`, `server`, `clock`) are in conftest.py.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

from engine.org import OrgConfig
from tests.support import org
from tests.support.calls import rid
from tests.support.envelopes import err as err
from tests.support.envelopes import ok
from tests.support.org import token

AGENT = org.SCREENER.id
AGENT_TOKEN = token(org.SCREENER)
MIRA = org.MIRA.id
MIRA_TOKEN = token(org.MIRA)
OMAR = org.OMAR.id
"""A group member with no token of his own: reachable only through OAuth."""
LENA = org.LENA.id
LENA_TOKEN = token(org.LENA)
OPS = org.OPS.id
OPS_TOKEN = token(org.OPS)
BIND = {"finance-approver": "g_finance"}

SCREENING = """
---
name: screening
description: Screen a vendor against the sanctions lists and get finance approval.
inputs:
  vendorName: string
steps:
  - id: check_vendor
    agent: Check the vendor against the sanctions lists and attach the report.
    output:
      cleared: boolean
    evidence: [file]
    next:
      - { to: approve, when: Vendor is cleared }
      - { to: decline, when: Any hit }
  - id: approve
    person: finance-approver
    approve: Approve when the vendor is cleared.
    next: done
  - id: decline
    finish: declined
  - id: done
    finish: onboarded
---

# Screening

The agent screens the vendor, finance approves.
"""

REPORT = b"Sanctions report for Acme: no hits on OFAC or EU lists.\n" + bytes(range(256))


def make_org() -> OrgConfig:
    """The shared org, but Omar has no token: he reaches the endpoint only through OAuth."""
    return org.make_org(people=(org.MIRA, org.LENA, org.OPS))


Caller = Callable[[str, str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""`(token, tool, arguments) -> envelope`: one tool call over some client."""


async def full_run(call: Caller, fetch: Callable[[str], Awaitable[tuple[int, bytes]]]) -> dict[str, Any]:
    """The whole screening run over the endpoint; returns what the test checks afterwards.

    Mira starts the run, the agent finds it in get_work, claims, uploads the report, submits with it
    as file evidence, Mira approves through her own work list, and the run ends `onboarded`.
    """
    started = ok(
        await call(
            MIRA_TOKEN,
            "start_run",
            {"process": "screening", "inputs": {"vendorName": "Acme"}, "requestId": rid()},
        ),
        "start_run",
    )
    run_id = started["run"]["id"]
    work = ok(await call(AGENT_TOKEN, "get_work", {}), "get_work")
    assert [(i["runId"], i["stepId"]) for i in work["items"]] == [(run_id, "check_vendor")]
    claim_call = work["items"][0]["claim"]
    assert claim_call["tool"] == "claim"
    claimed = ok(await call(AGENT_TOKEN, "claim", {**claim_call["arguments"], "requestId": rid()}), "claim")
    assert claimed["step"]["id"] == "check_vendor"
    assert claimed["step"]["evidence"] == ["file"]
    uploaded = ok(
        await call(
            AGENT_TOKEN,
            "upload",
            {
                "fileName": "sanctions report.pdf",
                "contentType": "application/pdf",
                "contentBase64": base64.b64encode(REPORT).decode(),
                "requestId": rid(),
            },
        ),
        "upload",
    )
    assert uploaded["bytes"] == len(REPORT)
    submitted = ok(
        await call(
            AGENT_TOKEN,
            "submit",
            {
                "token": claimed["token"],
                "output": {"cleared": True},
                "evidence": [{"kind": "file", "ref": uploaded["id"]}],
                "summary": "Searched both lists by legal name. No hits. Report attached.",
                "next": "approve",
                "reason": "Vendor is cleared.",
                "requestId": rid(),
            },
        ),
        "submit",
    )
    assert [(s["id"], s["state"]) for s in submitted["steps"]][:2] == [
        ("check_vendor", "done"),
        ("approve", "waiting"),
    ]
    evidence = submitted["data"]["steps"]["check_vendor"]["evidence"]
    assert [(e["kind"], e["ref"], e["sha256"]) for e in evidence] == [
        ("file", uploaded["id"], uploaded["sha256"])
    ]
    status, body = await fetch(evidence[0]["url"])
    assert (status, body) == (200, REPORT)

    mine = ok(await call(MIRA_TOKEN, "get_work", {}), "get_work")
    assert [(i["runId"], i["workItem"]["stepId"]) for i in mine["items"]] == [(run_id, "approve")]
    decide_call = mine["items"][0]["workItem"]["decide"]
    assert decide_call["decisions"] == ["approved", "rejected", "failed"]
    decided = ok(
        await call(
            MIRA_TOKEN, "decide", {**decide_call["arguments"], "decision": "approved", "requestId": rid()}
        ),
        "decide",
    )
    assert (decided["run"]["state"], decided["run"]["outcome"]) == ("ended", "onboarded")
    assert decided["data"]["steps"]["approve"]["decision"] == "approved"
    assert decided["data"]["steps"]["approve"]["by"] == MIRA
    assert decided["data"]["steps"]["check_vendor"]["by"] == AGENT
    final = ok(await call(AGENT_TOKEN, "get_run", {"runId": run_id}), "get_run")
    assert final["run"]["state"] == "ended"
    assert final["workItems"] == []
    return {"run_id": run_id, "file_url": evidence[0]["url"], "file_id": uploaded["id"]}
