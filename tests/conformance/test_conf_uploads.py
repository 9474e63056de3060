"""upload and evidence (spec §5, §4.2; tools.md `upload`, evidence item).

`{id, sha256, bytes}` with the real SHA-256, the `maxUploadBytes` limit, files usable by anyone in the
organization, extra evidence of any kind recorded as given, and a `url` made fresh at each read
(short-lived, so a stored one would go stale).
"""

from __future__ import annotations

import base64
from pathlib import Path

from engine.org import ServerSettings
from tests.conformance.conformance_support import (
    AGENT,
    DESK,
    FIN1,
    LEGAL,
    OPS,
    VENDOR,
    VENDOR_BIND,
    Server,
    open_server,
    sha256_hex,
    vendor_submission,
)


async def test_upload_returns_id_sha256_and_size(server: Server) -> None:
    content = "Prüfbericht für Acme\n".encode()
    for who in (AGENT, FIN1, OPS):
        stored = await server.ok(
            who,
            "upload",
            fileName="bericht.txt",
            contentType="text/plain; charset=utf-8",
            contentBase64=base64.b64encode(content).decode(),
        )
        assert stored["sha256"] == sha256_hex(content)
        assert stored["bytes"] == len(content)
        assert stored["id"]


async def test_upload_refuses_content_that_is_not_base64(server: Server) -> None:
    for text in ("not base64!", "YQ=", "@@@@"):
        await server.refused(
            AGENT, "upload", "invalid", fileName="a.txt", contentType="text/plain", contentBase64=text
        )


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


async def test_a_file_uploaded_by_a_person_is_evidence_for_an_agent(server: Server) -> None:
    await server.publish(VENDOR, VENDOR_BIND)
    run_id = (await server.start("vendor-screening", {"vendorName": "Acme"}))["run"]["id"]
    claimed = await server.claim(run_id, "check_vendor")
    arguments = await vendor_submission(server, claimed["token"], who=FIN1)
    view = await server.ok(AGENT, "submit", **arguments)
    assert view["data"]["steps"]["check_vendor"]["evidence"][0]["ref"] == arguments["evidence"][0]["ref"]


async def test_extra_evidence_of_any_kind_is_recorded_as_given(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    report = await server.upload(b"log excerpt")
    evidence = [{"kind": "link", "ref": "TICKET-42"}, {"kind": "file", "ref": report["id"]}]
    view = await server.ok(
        AGENT,
        "submit",
        token=claimed["token"],
        output={"priority": "low"},
        evidence=evidence,
        summary="Low.",
    )
    recorded = view["data"]["steps"]["triage"]["evidence"]
    assert recorded[0] == {"kind": "link", "ref": "TICKET-42"}
    assert (recorded[1]["kind"], recorded[1]["ref"], recorded[1]["sha256"]) == (
        "file",
        report["id"],
        report["sha256"],
    )


async def test_unknown_file_evidence_is_refused_even_where_no_file_is_required(server: Server) -> None:
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    await server.refused(
        AGENT,
        "submit",
        "not_accepted",
        ["evidence f_missing: not found"],
        token=claimed["token"],
        output={"priority": "low"},
        evidence=[{"kind": "file", "ref": "f_missing"}],
        summary="Low.",
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


async def test_a_long_link_is_recorded_as_stated(server: Server) -> None:
    """The evidence item schema bounds `ref` only below (minLength 1); a pre-signed document URL of a
    few thousand characters is a link like any other (§5: "Recorded as stated")."""
    await server.publish(DESK, {})
    view = await server.start("desk-work", {"ticket": "T-1", "owner": LEGAL.id}, who=FIN1)
    claimed = await server.claim(view["run"]["id"], "triage")
    link = "https://files.example/report.pdf?X-Signature=" + "a" * 3000
    view = await server.ok(
        AGENT,
        "submit",
        token=claimed["token"],
        output={"priority": "low"},
        evidence=[{"kind": "link", "ref": link}],
        summary="Low.",
    )
    assert view["data"]["steps"]["triage"]["evidence"] == [{"kind": "link", "ref": link}]
