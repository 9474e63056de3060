"""Uploads and file evidence (spec §5): size limit, verification at submit, signed short-lived URLs."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from tests.engine.engine_support import MIRA, SCREENER, SCREENING, call, claim, err, ok, publish, start

pytestmark = pytest.mark.both_stores

BIND = {"finance-approver": "g_finance"}


def b64(content: bytes) -> str:
    return base64.b64encode(content).decode()


async def _upload(engine: Engine, content: bytes) -> dict:
    reply = await call(
        engine,
        SCREENER,
        "upload",
        fileName="r.pdf",
        contentType="application/pdf",
        contentBase64=b64(content),
    )
    return ok(reply, "upload")


async def test_upload_stores_content_addressed_and_returns_id_hash_bytes(engine: Engine) -> None:
    data = await _upload(engine, b"screening report")
    digest = hashlib.sha256(b"screening report").hexdigest()
    assert data["id"].startswith("f_")
    assert (data["sha256"], data["bytes"]) == (digest, 16)
    stored = await engine.files.open(data["id"])
    assert stored is not None
    assert (stored.file_name, stored.content_type, stored.bytes, stored.sha256) == (
        "r.pdf",
        "application/pdf",
        16,
        digest,
    )
    assert stored.path.read_bytes() == b"screening report"
    assert stored.path.name == digest
    second = await _upload(engine, b"screening report")
    assert second["id"] != data["id"] and second["sha256"] == digest
    assert await engine.files.open("f_missing") is None


async def test_upload_refuses_bad_base64_and_oversized_content(engine: Engine) -> None:
    reply = await call(engine, MIRA, "upload", fileName="x", contentType="text/plain", contentBase64="***")
    err(reply, "invalid", ["contentBase64: not valid base64"])
    big = b64(b"x" * (10 * 1024 * 1024 + 1))
    reply = await call(engine, MIRA, "upload", fileName="x", contentType="text/plain", contentBase64=big)
    err(reply, "invalid", ["contentBase64: larger than maxUploadBytes (10485760)"])


async def test_a_file_changed_on_disk_is_refused_at_submit(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, SCREENING, BIND)
    run_id = (await start(engine, "screening", {"vendorName": "Acme"}))["run"]["id"]
    token = (await claim(engine, run_id, "check_vendor"))["token"]
    uploaded = await _upload(engine, b"original report")
    stored = await engine.files.open(uploaded["id"])
    assert stored is not None

    async def submit_files(*refs: str) -> dict[str, Any]:
        return await call(
            engine,
            SCREENER,
            "submit",
            token=token,
            output={"cleared": True, "summary": "ok"},
            evidence=[{"kind": "file", "ref": ref} for ref in refs],
            summary="s",
            next="approve",
            reason="cleared",
        )

    changed = f"evidence {uploaded['id']}: changed since upload"
    stored.path.write_bytes(b"tampered report")
    err(await submit_files(uploaded["id"]), "not_accepted", ["evidence: file required", changed])
    assert await engine.files.open(uploaded["id"]) is None
    stored.path.unlink()
    reply = await submit_files(uploaded["id"], "f_never_uploaded")
    err(reply, "not_accepted", ["evidence: file required", changed, "evidence f_never_uploaded: not found"])


async def test_links_never_stand_in_for_file_evidence(engine: Engine, tmp_path: Path) -> None:
    await publish(engine, tmp_path, SCREENING, BIND)
    run_id = (await start(engine, "screening", {"vendorName": "Acme"}))["run"]["id"]
    token = (await claim(engine, run_id, "check_vendor"))["token"]
    reply = await call(
        engine,
        SCREENER,
        "submit",
        token=token,
        output={"cleared": True, "summary": "ok"},
        evidence=[{"kind": "link", "ref": "https://example.com/report"}],
        summary="s",
        next="approve",
        reason="cleared",
    )
    err(reply, "not_accepted", ["evidence: file required"])


async def test_file_urls_are_signed_and_expire_after_fifteen_minutes(
    engine: Engine, tmp_path: Path, clock: ManualClock
) -> None:
    await publish(engine, tmp_path, SCREENING, BIND)
    run_id = (await start(engine, "screening", {"vendorName": "Acme"}))["run"]["id"]
    token = (await claim(engine, run_id, "check_vendor"))["token"]
    file_id = (await _upload(engine, b"report"))["id"]
    reply = await call(
        engine,
        SCREENER,
        "submit",
        token=token,
        output={"cleared": True, "summary": "ok"},
        evidence=[{"kind": "file", "ref": file_id}],
        summary="s",
        next="approve",
        reason="cleared",
    )
    url = ok(reply, "submit")["data"]["steps"]["check_vendor"]["evidence"][0]["url"]
    parsed = urlparse(url)
    query = parse_qs(parsed.query)
    expires, sig = int(query["expires"][0]), query["sig"][0]
    assert (parsed.scheme, parsed.netloc, parsed.path) == ("http", "127.0.0.1:8765", f"/files/{file_id}")
    assert expires == int(clock.now().timestamp()) + 900
    assert engine.files.verify_signed(file_id, expires, sig) is True
    assert engine.files.verify_signed(file_id, expires + 1, sig) is False
    assert engine.files.verify_signed("f_other", expires, sig) is False
    clock.advance(901)
    assert engine.files.verify_signed(file_id, expires, sig) is False
    fresh = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert fresh["data"]["steps"]["check_vendor"]["evidence"][0]["url"] != url
