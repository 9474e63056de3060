"""The `/files/{id}` route: signed, short-lived, exact bytes, served only as a download."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.http.app import RunningServer
from engine.http.files import content_disposition, safe_file_name, safe_media_type
from engine.identity import agent
from tests.engine.http.http_support import AGENT, REPORT, ok, rid


async def upload(engine: Engine, name: str, content_type: str, content: bytes = REPORT) -> str:
    arguments = {
        "fileName": name,
        "contentType": content_type,
        "contentBase64": base64.b64encode(content).decode(),
        "requestId": rid(),
    }
    return ok(await engine.call(agent(AGENT), "upload", arguments), "upload")["id"]


async def get(url: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.get(url)


def with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()} | changes
    return parts._replace(query=urlencode(query)).geturl()


async def test_a_signed_url_downloads_the_exact_bytes_as_an_attachment(
    server: RunningServer, engine: Engine
) -> None:
    file_id = await upload(engine, "Prüfbericht März.pdf", "application/pdf")
    response = await get(engine.files.signed_url(file_id))
    assert response.status_code == 200
    assert response.content == REPORT
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-length"] == str(len(REPORT))
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"Pr_fbericht M_rz.pdf\"; filename*=UTF-8''Pr%C3%BCfbericht%20M%C3%A4rz.pdf"
    )
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == "default-src 'none'; sandbox"


async def test_html_is_downloaded_not_rendered(server: RunningServer, engine: Engine) -> None:
    file_id = await upload(engine, "page.html", "text/html", b"<script>alert(1)</script>")
    response = await get(engine.files.signed_url(file_id))
    assert response.status_code == 200
    assert response.headers["content-disposition"].startswith('attachment; filename="page.html"')
    assert response.headers["content-security-policy"] == "default-src 'none'; sandbox"


async def test_a_tampered_url_is_refused(server: RunningServer, engine: Engine) -> None:
    file_id = await upload(engine, "report.pdf", "application/pdf")
    other_id = await upload(engine, "other.pdf", "application/pdf", b"other bytes")
    url = engine.files.signed_url(file_id)
    signature = parse_qs(urlsplit(url).query)["sig"][0]
    expires = int(parse_qs(urlsplit(url).query)["expires"][0])
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    refused = [
        with_query(url, sig=flipped),
        with_query(url, expires=str(expires + 3600)),
        url.replace(file_id, other_id),
        with_query(url, sig=""),
        with_query(url, expires="soon"),
        url.split("?")[0],
    ]
    responses = [await get(u) for u in refused]
    assert [(r.status_code, r.text) for r in responses] == [
        (403, "this link is not valid or has expired")
    ] * 6
    assert all(REPORT not in r.content for r in responses)


async def test_an_expired_url_is_refused(server: RunningServer, engine: Engine, clock: ManualClock) -> None:
    file_id = await upload(engine, "report.pdf", "application/pdf")
    url = engine.files.signed_url(file_id)
    clock.advance(minutes=15)
    still = await get(url)
    clock.advance(seconds=1)
    expired = await get(url)
    assert still.status_code == 200
    assert (expired.status_code, expired.text) == (403, "this link is not valid or has expired")


async def test_a_signed_url_for_a_missing_or_altered_file_is_404(
    server: RunningServer, engine: Engine
) -> None:
    file_id = await upload(engine, "report.pdf", "application/pdf")
    stored = await engine.files.open(file_id)
    assert stored is not None
    stored.path.write_bytes(b"changed on disk")
    altered = await get(engine.files.signed_url(file_id))
    missing = await get(engine.files.signed_url("f_does_not_exist"))
    assert [(r.status_code, r.text) for r in (altered, missing)] == [(404, "this file is not available")] * 2


async def test_nothing_else_on_disk_is_reachable(server: RunningServer, engine: Engine) -> None:
    base = f"http://127.0.0.1:{server.port}"
    async with httpx.AsyncClient() as client:
        statuses = [
            (await client.get(f"{base}/files/..%2Fengine.db?expires=9999999999&sig=x")).status_code,
            (await client.get(f"{base}/files/../engine.db")).status_code,
            (await client.get(f"{base}/engine.db")).status_code,
            (await client.get(f"{base}/files/")).status_code,
            (await client.get(engine.files.signed_url("engine.db"))).status_code,
        ]
    assert statuses == [404, 404, 404, 404, 404]


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\mira\\notes.txt", "notes.txt"),
        ('a"b\r\n;c.pdf', "a_b___c.pdf"),
        ("..", "file"),
        ("", "file"),
        (" .hidden ", "hidden"),
        ("x" * 300, "x" * 150),
    ],
)
def test_safe_file_name(name: str, safe: str) -> None:
    assert safe_file_name(name) == safe


def test_content_disposition_keeps_the_exact_name_in_filename_star() -> None:
    assert (
        content_disposition("报告 1.pdf")
        == "attachment; filename=\"__ 1.pdf\"; filename*=UTF-8''%E6%8A%A5%E5%91%8A%201.pdf"
    )


@pytest.mark.parametrize(
    ("given", "served"),
    [
        ("application/pdf", "application/pdf"),
        ("Text/Plain; charset=utf-8", "text/plain"),
        ("text/html\r\nX-Evil: 1", "application/octet-stream"),
        ("nonsense", "application/octet-stream"),
    ],
)
def test_safe_media_type(given: str, served: str) -> None:
    assert safe_media_type(given) == served
