"""Reading an evidence file back through the short-lived URL the server put in run data.

The bytes are streamed: `progress(read, total)` hears of each chunk (total is the announced length,
None when the server does not say), a file over the limit is refused as soon as it passes it, and
cancelling the awaiting task (the console's `esc`) stops the download and closes the connection.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from console.client.envelope import failure
from console.client.wire import Failure

MAX_FETCH_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 256 * 1024
Progress = Callable[[int, int | None], None]
"""Told the bytes read so far and the total the server announced (None when it did not)."""
_FILENAME = re.compile(r"""filename\*?=(?:UTF-8'')?"?([^";]+)"?""", re.IGNORECASE)


@dataclass(frozen=True)
class FetchedFile:
    """An evidence file's bytes as served, with the name the server gave it when it gave one."""

    content: bytes
    file_name: str | None
    content_type: str | None


def file_name_from(disposition: str | None) -> str | None:
    if not disposition:
        return None
    match = _FILENAME.search(disposition)
    return match.group(1).strip() if match else None


async def fetch_url(
    url: str, *, transport: httpx.AsyncBaseTransport | None = None, progress: Progress | None = None
) -> FetchedFile | Failure:
    """GET a signed URL; a failure comes back as an error envelope, like every other answer."""
    chunks: list[bytes] = []
    try:
        async with (
            httpx.AsyncClient(transport=transport, timeout=30.0, follow_redirects=False) as http,
            http.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                return failure("not_found", f"the file URL answered HTTP {response.status_code}")
            total = announced(response.headers.get("content-length"))
            if total is not None and total > MAX_FETCH_BYTES:
                return too_large()
            read = 0
            async for chunk in response.aiter_bytes(CHUNK_BYTES):
                read += len(chunk)
                if read > MAX_FETCH_BYTES:
                    return too_large()
                chunks.append(chunk)
                if progress is not None:
                    progress(read, total)
            headers = response.headers
    except httpx.HTTPError as exc:
        return failure("retry", f"could not read the file: {exc}")
    return FetchedFile(
        b"".join(chunks), file_name_from(headers.get("content-disposition")), headers.get("content-type")
    )


def announced(length: str | None) -> int | None:
    return int(length) if length is not None and length.isdigit() else None


def too_large() -> Failure:
    return failure("invalid", f"the file is larger than the console reads ({MAX_FETCH_BYTES // 2**20} MiB)")
