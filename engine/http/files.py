"""The file route behind evidence `url`s (spec §5): a signed, short-lived link to one upload's bytes.

The link is the credential: its signature covers the file id and expiry, so it needs no bearer token
and opens nothing else. The bytes are sent as a download, never rendered by a browser on this origin,
because both the content type and the file name came from whoever uploaded them.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Protocol
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from engine.files import StoredFile

_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")
_UNSAFE_NAME_CHARS = re.compile(r'[\x00-\x1f\x7f"\\/:*?<>|;]')
_MAX_NAME = 150
FALLBACK_NAME = "file"

REFUSED = "this link is not valid or has expired"


class FileSource(Protocol):
    def verify_signed(self, file_id: str, expires: int, signature: str) -> bool: ...

    async def open(self, file_id: str) -> StoredFile | None: ...


def safe_media_type(content_type: str) -> str:
    """The uploader's content type when it is a plain `type/subtype`, else a generic binary type."""
    candidate = content_type.split(";", 1)[0].strip().lower()
    return candidate if _MEDIA_TYPE.fullmatch(candidate) else "application/octet-stream"


def safe_file_name(name: str) -> str:
    """The last path segment, without control or reserved characters, trimmed to a sane length."""
    name = unicodedata.normalize("NFC", name).replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE_NAME_CHARS.sub("_", name).strip(" .")
    return name[:_MAX_NAME] or FALLBACK_NAME


def content_disposition(name: str) -> str:
    """`attachment` with an ASCII `filename` fallback and the exact name in RFC 5987 `filename*`."""
    safe = safe_file_name(name)
    ascii_name = "".join(c if c.isascii() and c.isprintable() else "_" for c in safe)
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(safe, safe='')}"


def file_route(files: FileSource) -> Route:
    async def download(request: Request) -> Response:
        file_id = request.path_params["file_id"]
        expires, signature = request.query_params.get("expires", ""), request.query_params.get("sig", "")
        if not expires.isdigit() or len(expires) > 12 or not signature:
            return PlainTextResponse(REFUSED, status_code=403)
        if not files.verify_signed(file_id, int(expires), signature):
            return PlainTextResponse(REFUSED, status_code=403)
        stored = await files.open(file_id)
        if stored is None:
            return PlainTextResponse("this file is not available", status_code=404)
        return FileResponse(
            stored.path,
            media_type=safe_media_type(stored.content_type),
            headers={
                "Content-Disposition": content_disposition(stored.file_name),
                "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'none'; sandbox",
                "Cache-Control": "private, no-store",
            },
        )

    return Route("/files/{file_id}", download, methods=["GET", "HEAD"])
