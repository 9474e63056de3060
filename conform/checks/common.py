"""Steps many checks share: fresh runs, a vendor screening up to its approval, the server's time,
file fetches, the shape of a work item's decide call."""

from __future__ import annotations

from typing import Any

import httpx

from conform.config import Actor
from conform.expect import equal
from conform.session import Session

VENDOR_STEP = {
    "id": "check_vendor",
    "instructions": "Check the vendor against both sanctions lists.\nAttach the screening report.\n",
    "output": {"cleared": "boolean", "summary": "string"},
    "evidence": ["file"],
    "next": [
        {"to": "approve", "when": "The vendor is cleared on both lists"},
        {"to": "decline", "when": "Any sanctions hit"},
    ],
}
"""`claim.step` of conform-vendor's first step, exactly as the process writes it."""


async def vendor_run(s: Session) -> str:
    """A fresh conform-vendor run, its first step ready for an agent: its id."""
    return str((await s.start("conform-vendor", {"vendorName": "Acme"}))["run"]["id"])


async def chain_run(s: Session) -> str:
    """A fresh conform-chain run, its `draft` step ready for an agent: its id."""
    return str((await s.start("conform-chain", {"title": "Memo"}))["run"]["id"])


async def vendor_submission(
    s: Session, token: str, route: str = "approve", who: Actor | None = None
) -> dict[str, Any]:
    """Arguments of an acceptable `check_vendor` submission, with a freshly uploaded report."""
    report = await s.upload(who=who)
    return {
        "token": token,
        "output": {"cleared": route == "approve", "summary": "No hits on either list."},
        "evidence": [{"kind": "file", "ref": report["id"]}],
        "summary": "Searched both lists by legal name. Report attached.",
        "next": route,
        "reason": "Cleared on both lists." if route == "approve" else "A hit.",
    }


async def vendor_at_approval(s: Session, who: Actor | None = None, **extra: Any) -> Any:
    """A conform-vendor run whose screening was accepted: the view with the approval work item."""
    view = await s.start("conform-vendor", {"vendorName": "Acme"}, who, **extra)
    claimed = await s.claim(view["run"]["id"], "check_vendor")
    return await s.ok(s.agent, "submit", **await vendor_submission(s, claimed["token"]))


async def desk_at_fix(s: Session) -> dict[str, Any]:
    """A conform-desk run person2 started, triaged: the view with `fix` assigned to person1."""
    view = await s.start("conform-desk", {"ticket": "T-9", "owner": s.person1.value}, s.person2)
    triaged: dict[str, Any] = await s.work(view["run"]["id"], "triage", {"priority": "low"})
    return triaged


async def server_time(s: Session) -> str:
    """The server's time now, read from a write: the start of a throwaway run."""
    view = await s.start("conform-queue", {"n": 0})
    return str(view["run"]["startedAt"])


async def fetch(url: str, token: str) -> tuple[int, bytes]:
    """GET a file URL as given; if the server wants a credential for it, with the caller's bearer token."""
    async with httpx.AsyncClient(timeout=30.0) as client:
        response = await client.get(url)
        if response.status_code in (401, 403):
            response = await client.get(url, headers={"Authorization": f"Bearer {token}"})
        return response.status_code, response.content


def expect_decide_call(item: dict[str, Any], run_id: str, decisions: list[str]) -> None:
    """A work item's `decide` is the exact call to make: its run, item and snapshot, the decisions it takes."""
    equal(
        "decide call",
        item["decide"],
        {
            "tool": "decide",
            "arguments": {
                "runId": run_id,
                "workItemId": item["id"],
                "snapshot": item["snapshot"],
                "requestId": item["decide"]["arguments"]["requestId"],
            },
            "decisions": decisions,
        },
    )


def file_items(value: Any) -> list[dict[str, Any]]:
    """Every `file` evidence item anywhere inside a result."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if value.get("kind") == "file" and "ref" in value:
            found.append(value)
        for inner in value.values():
            found.extend(file_items(inner))
    elif isinstance(value, list):
        for inner in value:
            found.extend(file_items(inner))
    return found
