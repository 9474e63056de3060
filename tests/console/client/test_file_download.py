"""A big evidence file is read back in chunks: progress as it comes, a size cap applied while reading,
and `esc` in the evidence pane stops the download (the worker's task is cancelled, the stream closed);
the file's name comes from its Content-Disposition."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from textual.worker import Worker

from console.client import files
from console.client.files import CHUNK_BYTES, FetchedFile, fetch_url, file_name_from
from console.client.local import LocalClient
from console.panes.evidence import READING, EvidencePane, file_key, read_so_far
from tests.console.console_support import Agent, cells, run_view, settle
from tests.console.panes.test_pane_messages import PALETTE, WRITES, Harness

URL = "http://files.test/files/f_1?expires=1&sig=s"
KEY = "check_vendor/c/0"


def serving(body: bytes, *, length: bool = True) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        headers = {"content-disposition": 'attachment; filename="big.bin"', "content-type": "application/x"}
        if length:
            return httpx.Response(200, content=body, headers=headers)

        async def chunks() -> AsyncIterator[bytes]:
            for start in range(0, len(body), 100_000):
                yield body[start : start + 100_000]

        return httpx.Response(200, content=chunks(), headers=headers)

    return httpx.MockTransport(handle)


async def test_progress_is_told_each_chunk_with_the_announced_total() -> None:
    body = bytes(range(256)) * (2 * CHUNK_BYTES // 256 + 100)
    seen: list[tuple[int, int | None]] = []
    fetched = await fetch_url(
        URL, transport=serving(body), progress=lambda read, total: seen.append((read, total))
    )
    assert fetched == FetchedFile(body, "big.bin", "application/x")
    assert seen == [(CHUNK_BYTES, len(body)), (2 * CHUNK_BYTES, len(body)), (len(body), len(body))]


async def test_without_a_length_progress_has_no_total_and_the_cap_applies_while_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = b"y" * 250_000
    seen: list[tuple[int, int | None]] = []
    fetched = await fetch_url(
        URL, transport=serving(body, length=False), progress=lambda r, t: seen.append((r, t))
    )
    assert isinstance(fetched, FetchedFile) and fetched.content == body
    assert seen[-1] == (250_000, None) and all(total is None for _, total in seen)
    monkeypatch.setattr(files, "MAX_FETCH_BYTES", 2**20 + 100)
    read: list[int] = []
    big = b"y" * (2 * 2**20)
    refused = await fetch_url(URL, transport=serving(big, length=False), progress=lambda r, _: read.append(r))
    assert refused == {
        "ok": False,
        "error": {"code": "invalid", "message": "the file is larger than the console reads (1 MiB)"},
    }
    assert read == [CHUNK_BYTES * n for n in (1, 2, 3, 4)], "stopped as soon as the cap was passed"
    announced = await fetch_url(URL, transport=serving(big), progress=lambda r, _: read.append(-1))
    assert announced == refused
    assert -1 not in read, "a length over the cap is refused before reading"


async def test_cancelling_the_task_stops_the_download_and_closes_the_stream() -> None:
    closed = asyncio.Event()
    first = asyncio.Event()

    class Endless(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield b"z" * CHUNK_BYTES
            await asyncio.Event().wait()
            yield b""

        async def aclose(self) -> None:
            closed.set()

    transport = httpx.MockTransport(lambda request: httpx.Response(200, stream=Endless()))
    task = asyncio.create_task(fetch_url(URL, transport=transport, progress=lambda r, t: first.set()))
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed.is_set()


@pytest.mark.parametrize(
    ("read", "total", "shown"), [(1, 4, "↓ 25%"), (4, 4, "↓ 100%"), (12_500_000, None, "↓ 12.5 MB")]
)
def test_progress_reads_as_a_share_or_a_size(read: int, total: int | None, shown: str) -> None:
    assert read_so_far(read, total) == shown


async def test_esc_in_the_evidence_pane_stops_reading_and_otherwise_is_left_alone(
    client: LocalClient, agent: Agent
) -> None:
    run_id = await agent.start("screening", {"vendorName": "Acme"})
    await agent.screen(run_id, report=b"OFAC: no hits\n")
    view = await run_view(client, run_id)
    pane = EvidencePane(WRITES)
    app = Harness(pane)
    async with app.run_test(size=(160, 40)) as pilot:
        pane.show(view, PALETTE)
        pane.table.focus()
        await settle(pilot)
        assert pane.check_action("stop_reading", ()) is False, "esc goes on up when nothing is read"
        [item] = pane.unchecked()
        stuck = asyncio.Event()

        async def reading() -> None:
            pane.progress(item, 3_000_000, 12_000_000)
            await stuck.wait()

        worker: Worker[None] = pane.run_worker(reading(), group=READING)
        while not pane.reading:
            await pilot.pause()
        assert pane.check_action("stop_reading", ()) is True
        assert cells(pane.table, KEY)[3].plain == "↓ 25%"
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        assert worker.is_cancelled
        assert pane.checked == {file_key(item): "stopped"}
        assert cells(pane.table, KEY)[3].plain == "✗ stopped"
        assert pane.check_action("stop_reading", ()) is False


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("attachment; filename=\"report.txt\"; filename*=UTF-8''r%C3%A9port.txt", "report.txt"),
        ("attachment", None),
        (None, None),
    ],
)
def test_file_names_come_from_the_content_disposition(header: str | None, name: str | None) -> None:
    assert file_name_from(header) == name
