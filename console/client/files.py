"""Reading an evidence file back through the short-lived URL the server put in run data."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from console.client.envelope import failure
from console.client.wire import Failure

MAX_FETCH_BYTES = 64 * 1024 * 1024
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


async def fetch_url(url: str, *, transport: httpx.AsyncBaseTransport | None = None) -> FetchedFile | Failure:
    """GET a signed URL; a failure comes back as an error envelope, like every other answer."""
    try:
        async with httpx.AsyncClient(transport=transport, timeout=30.0, follow_redirects=False) as http:
            response = await http.get(url)
    except httpx.HTTPError as exc:
        return failure("retry", f"could not read the file: {exc}")
    if response.status_code != 200:
        return failure("not_found", f"the file URL answered HTTP {response.status_code}")
    if len(response.content) > MAX_FETCH_BYTES:
        return failure("invalid", "the file is larger than the console reads")
    return FetchedFile(
        response.content,
        file_name_from(response.headers.get("content-disposition")),
        response.headers.get("content-type"),
    )
