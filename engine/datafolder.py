"""The data folder: where one engine keeps its database, uploads and lock, readable by its owner only.

One default for the console and `apc serve` on every platform (platformdirs). A lock file, held with
an operating-system lock for as long as the engine is open, keeps a second engine out of a SQLite
folder: it fails at once with an error naming the first one's process id. The kernel drops the lock
when its process dies, so a lock file left behind by a crash is simply taken over.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "apc"
LOCK_FILE = "apc.lock"
FOLDER_MODE = 0o700
FILE_MODE = 0o600
_LOCK_OFFSET = 1 << 20
"""Windows locks byte ranges: the one locked lies past the pid text, which stays readable."""


def default_data_dir() -> Path:
    """The user data folder for `apc` on this platform (XDG on Linux, Application Support, AppData)."""
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


class DataFolderInUse(Exception):
    """Another engine holds the folder's lock."""

    def __init__(self, folder: Path, pid: int | None) -> None:
        holder = f"process {pid}" if pid is not None else "another process"
        super().__init__(
            f"the data folder {folder} is in use by {holder}: stop it, or choose another folder with --data"
        )
        self.folder = folder
        self.pid = pid


def prepare(folder: Path) -> None:
    """Create the folder (and its `files/`) owner-only, and tighten a folder that exists already."""
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    (folder / "files").mkdir(mode=FOLDER_MODE, exist_ok=True)
    for path in (folder, folder / "files"):
        if path.stat().st_mode & 0o077:
            path.chmod(FOLDER_MODE)


def private_file(path: Path) -> None:
    """Create `path` empty and owner-only if missing (SQLite gives its -wal and -shm the same mode);
    tighten it if it exists."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(fd)
    if path.stat().st_mode & 0o077:
        path.chmod(FILE_MODE)


class FolderLock:
    """The held lock of one data folder; `release` (or the process ending) lets the next engine in."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: Path) -> FolderLock:
        path = folder / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            _lock(fd)
        except OSError:
            pid = _read_pid(fd)
            os.close(fd)
            raise DataFolderInUse(folder, pid) from None
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".ljust(16).encode())
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            _unlock(fd)
        os.close(fd)


def check_free(folder: Path) -> None:
    """Raise DataFolderInUse if an engine holds `folder` now (a look before a slow start, not a lock)."""
    if not (folder / LOCK_FILE).is_file():
        return
    FolderLock.acquire(folder).release()


def _read_pid(fd: int) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        os.lseek(fd, 0, os.SEEK_SET)
        return int(os.read(fd, 64).decode("ascii").strip())
    return None


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        os.lseek(fd, _LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, _LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
