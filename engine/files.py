"""Uploads (spec §5): content-addressed storage, verification at submission, signed short-lived URLs.

Bytes live in `data_dir/files/<sha256[:2]>/<sha256>`, written to a temporary file, fsynced and renamed
before the database row commits, so an acknowledged upload is never missing its content. A submission
re-hashes the stored bytes: a file changed on disk is refused rather than silently accepted.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import os
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from engine.clock import Clock
from engine.store.base import FileRecord, Store

URL_SECONDS = 15 * 60


@dataclass(frozen=True)
class StoredFile:
    path: Path
    file_name: str
    content_type: str
    bytes: int
    sha256: str


class FileError(ValueError):
    """An upload that cannot be stored; the message is a wire issue such as `contentBase64: ...`."""


class Unverified(LookupError):
    """A file that does not verify (spec §5), the message saying why: `not found` in this
    organization, or `changed since upload` when its stored bytes no longer hash to what was recorded
    at upload (or are gone), so the uploader knows to upload it again rather than look for a typo."""


class Files:
    def __init__(self, root: Path, store: Store, secret: bytes, clock: Clock, base_url: str) -> None:
        self.root = root
        self._store = store
        self._secret = secret
        self._clock = clock
        self._base_url = base_url.rstrip("/")
        root.mkdir(parents=True, exist_ok=True)

    def decode(self, content_base64: str, max_bytes: int) -> bytes:
        if len(content_base64) > (max_bytes + 2) // 3 * 4 + 4:
            raise FileError(f"contentBase64: larger than maxUploadBytes ({max_bytes})")
        try:
            content = base64.b64decode(content_base64, validate=True)
        except (binascii.Error, ValueError):
            raise FileError("contentBase64: not valid base64") from None
        if len(content) > max_bytes:
            raise FileError(f"contentBase64: larger than maxUploadBytes ({max_bytes})")
        if not content:
            raise FileError("contentBase64: empty file")
        return content

    def _blob(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def write(self, content: bytes) -> str:
        """Store the bytes durably under their hash; identical content is stored once."""
        sha256 = hashlib.sha256(content).hexdigest()
        target = self._blob(sha256)
        if target.exists() and _hash_file(target) == sha256:
            return sha256
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return sha256

    async def verify(self, file_id: str) -> FileRecord:
        """The file's record when it exists and its stored bytes still hash to what was recorded;
        `Unverified` otherwise."""
        record = await self._store.get_file(file_id)
        if record is None:
            raise Unverified("not found")
        blob = self._blob(record.sha256)
        if not blob.is_file() or await asyncio.to_thread(_hash_file, blob) != record.sha256:
            raise Unverified("changed since upload")
        return record

    async def open(self, file_id: str) -> StoredFile | None:
        try:
            record = await self.verify(file_id)
        except Unverified:
            return None
        return StoredFile(
            self._blob(record.sha256), record.file_name, record.content_type, record.bytes, record.sha256
        )

    def _signature(self, file_id: str, expires: int) -> str:
        mac = hmac.new(self._secret, f"{file_id}:{expires}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")

    def signed_url(self, file_id: str) -> str:
        expires = int((self._clock.now() + timedelta(seconds=URL_SECONDS)).timestamp())
        return f"{self._base_url}/files/{file_id}?expires={expires}&sig={self._signature(file_id, expires)}"

    def verify_signed(self, file_id: str, expires: int, signature: str) -> bool:
        if expires < int(self._clock.now().timestamp()):
            return False
        return hmac.compare_digest(self._signature(file_id, expires), signature)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
