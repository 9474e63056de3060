"""What only the server's own configuration and publisher can show (spec §4.1, §5; tools.md describe,
upload, list_processes).

`apc conform` checks `describe`, uploads and paging over the wire against whatever the server says;
here the settings are ours to choose, so `describe` must report exactly them, the upload limit is
the configured one, signed file URLs are made fresh at each read as the clock moves, and
`list_processes` pages through more publications than the runner's own processes fill.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from engine.identity import Identity
from engine.org import ServerSettings
from tests.conformance.conformance_support import (
    AGENT,
    FIN1,
    MEMO,
    MEMO_BIND,
    OPS,
    OUTSIDER,
    VENDOR,
    VENDOR_BIND,
    Server,
    open_server,
    vendor_submission,
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


async def _pages(server: Server, who: Identity, tool: str, **arguments: Any) -> list[list[Any]]:
    pages: list[list[Any]] = []
    cursor: str | None = None
    for _ in range(50):
        extra = {"cursor": cursor} if cursor is not None else {}
        data = await server.ok(who, tool, **arguments, **extra)
        pages.append(data["items"])
        cursor = data["nextCursor"]
        if cursor is None:
            return pages
        assert isinstance(cursor, str) and cursor
    raise AssertionError("paging never ended")


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


async def test_upload_limit_is_the_one_describe_reports(tmp_path: Path) -> None:
    async with open_server(tmp_path, ServerSettings(max_upload_bytes=16)) as small:
        limit = (await small.ok(AGENT, "describe"))["maxUploadBytes"]
        assert limit == 16
        at_limit = base64.b64encode(b"x" * limit).decode()
        over = base64.b64encode(b"x" * (limit + 1)).decode()
        await small.ok(
            AGENT, "upload", fileName="a.bin", contentType="application/octet-stream", contentBase64=at_limit
        )
        await small.refused(
            AGENT,
            "upload",
            "invalid",
            fileName="a.bin",
            contentType="application/octet-stream",
            contentBase64=over,
        )


async def test_file_urls_are_made_at_each_read(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    run_id = (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]
    claimed = await server.claim(run_id, "check_vendor")
    await server.ok(AGENT, "submit", **await vendor_submission(server, claimed["token"]))
    early = (await server.view(run_id))["data"]["steps"]["check_vendor"]["evidence"][0]["url"]
    server.clock.advance(days=1)
    late = (await server.view(run_id))["data"]["steps"]["check_vendor"]["evidence"][0]["url"]
    assert early != late


async def test_list_processes_pages_cover_every_process_once(server: Server) -> None:
    names = [f"memo-{n:03d}" for n in range(60)]
    for name in names:
        await server.publish(MEMO.replace("name: memo-writing", f"name: {name}"), MEMO_BIND)
    pages = await _pages(server, AGENT, "list_processes")
    listed = [item["name"] for page in pages for item in page]
    assert sorted(listed) == names and len(listed) == len(set(listed))
