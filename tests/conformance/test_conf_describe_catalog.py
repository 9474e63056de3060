"""describe, list_processes and start_run's choice of version (spec §4.1, §6 rule 5; tools.md)."""

from __future__ import annotations

from tests.conformance.conformance_support import (
    AGENT,
    FIN1,
    MEMO,
    MEMO_BIND,
    OPS,
    OUTSIDER,
    SIGN,
    VENDOR,
    VENDOR_BIND,
    Server,
)

REQUIRED_TOOLS = {
    "describe",
    "list_processes",
    "start_run",
    "get_run",
    "get_work",
    "claim",
    "submit",
    "escalate",
    "decide",
    "cancel",
}


async def test_describe_reports_protocol_profiles_lease_person_tools_and_limits(server: Server) -> None:
    for who in (AGENT, FIN1, OPS, OUTSIDER):
        data = await server.ok(who, "describe")
        assert data["protocol"] == "agentprocess"
        assert data["version"] == "core-2"
        assert "parallel-1" in data["profiles"]
        assert data["leaseSeconds"] == server.engine.org.server.lease_seconds
        assert data["person"] == {"format": "email"}
        assert set(data["tools"]) >= REQUIRED_TOOLS
        assert len(data["tools"]) == len(set(data["tools"]))
        assert data["limits"]["runDataBytes"] == server.engine.org.server.run_data_bytes
        assert data.get("maxUploadBytes", 10 * 1024 * 1024) == 10 * 1024 * 1024


async def test_describe_offers_the_tools_published_processes_need(server: Server) -> None:
    """§4.2: upload is required when a process uses evidence: [file], send_event when one uses wait_for."""
    await server.publish(VENDOR, VENDOR_BIND)
    tools = (await server.ok(AGENT, "describe"))["tools"]
    assert "upload" in tools
    assert "send_event" in tools


async def test_list_processes_gives_name_description_latest_version_inputs_and_requires(
    server: Server,
) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    await server.publish(SIGN, VENDOR_BIND)
    data = await server.ok(OUTSIDER, "list_processes")
    assert data["nextCursor"] is None
    by_name = {item["name"]: item for item in data["items"]}
    assert by_name == {
        "vendor-screening": {
            "name": "vendor-screening",
            "description": "Screen a new vendor against sanctions lists and get finance approval.",
            "version": 1,
            "inputs": {
                "vendorName": "string",
                "amount": {"type": "number", "description": "Expected annual spend", "optional": True},
            },
        },
        "quick-sign": {
            "name": "quick-sign",
            "description": "An agent prepares an amount and finance signs it or rejects it for good.",
            "version": 1,
            "inputs": {"amount": "number"},
            "requires": {"systems": ["erp", "gmail"]},
        },
    }


async def test_a_new_version_is_listed_and_runs_pin_theirs(server: Server) -> None:
    await server.publish(MEMO, MEMO_BIND)
    first = await server.start("memo-writing", {"topic": "Leases"})
    await server.publish(MEMO.replace("One task.", "One task, version two."), MEMO_BIND)
    listed = (await server.ok(AGENT, "list_processes"))["items"]
    assert [(i["name"], i["version"]) for i in listed] == [("memo-writing", 2)]
    latest = await server.start("memo-writing", {"topic": "Leases"})
    pinned = await server.start("memo-writing", {"topic": "Leases"}, version=1)
    assert (latest["run"]["version"], latest["body"]) == (2, "\nOne task, version two.\n")
    assert (pinned["run"]["version"], pinned["body"]) == (1, "\nOne task.\n")
    again = await server.view(first["run"]["id"])
    assert (again["run"]["version"], again["body"]) == (1, "\nOne task.\n")


async def test_start_run_on_an_unknown_process_or_version_is_not_found(server: Server) -> None:
    await server.publish(MEMO, MEMO_BIND)
    await server.refused(AGENT, "start_run", "not_found", process="no-such-process", inputs={})
    await server.refused(
        AGENT, "start_run", "not_found", process="memo-writing", version=2, inputs={"topic": "x"}
    )


async def test_the_run_view_carries_the_body_exactly(server: Server) -> None:
    """The body is everything after the closing `---` line, as written (§6 rule 5)."""
    await server.publish(VENDOR, VENDOR_BIND)
    view = await server.start("vendor-screening", {"vendorName": "Acme"})
    assert view["body"] == "\n# Vendor screening\n\nThe agent screens, finance approves.\n"
    assert view["run"]["startedBy"] == AGENT.id
    assert view["run"]["mode"] == "live"
    assert view["run"]["startedAt"] == view["run"]["updatedAt"] == "2026-10-06T09:00:00Z"
