"""The data folder: owner-only on disk, and one engine at a time (the second is told whose it is)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import DB_FILE, Engine
from engine.datafolder import LOCK_FILE, DataFolderInUse, FolderLock, check_free, default_data_dir
from engine.keys import SECRETS_FILE
from tests.engine.engine_support import make_org

HOLDER = """
import sys, time
from pathlib import Path
from engine.datafolder import FolderLock
FolderLock.acquire(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(60)
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_the_folder_is_owner_only_and_so_is_every_file_the_engine_writes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        async with engine.store.transaction() as tx:
            await tx.set_meta("probe", "written")
        files = sorted(p.name for p in data.iterdir() if p.is_file())
        assert files == sorted([DB_FILE, f"{DB_FILE}-shm", f"{DB_FILE}-wal", LOCK_FILE, SECRETS_FILE])
        assert {name: mode(data / name) for name in files} == dict.fromkeys(files, 0o600)
    finally:
        await engine.close()
    assert (mode(data), mode(data / "files")) == (0o700, 0o700)


async def test_an_existing_folder_open_to_others_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    (data / DB_FILE).touch()
    (data / DB_FILE).chmod(0o644)
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    await engine.close()
    assert (mode(data), mode(data / DB_FILE)) == (0o700, 0o600)


async def test_a_second_engine_on_the_folder_is_refused_naming_the_first_ones_pid(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        with pytest.raises(DataFolderInUse) as refused:
            await Engine.open(data, make_org(), clock=ManualClock())
        assert refused.value.pid == os.getpid()
        assert str(refused.value) == (
            f"the data folder {data} is in use by process {os.getpid()}: "
            "stop it, or choose another folder with --data"
        )
        with pytest.raises(DataFolderInUse):
            check_free(data)
    finally:
        await first.close()
    check_free(data)
    second = await Engine.open(data, make_org(), clock=ManualClock())
    await second.close()


async def test_another_process_holding_the_folder_is_named_and_its_lock_goes_when_it_dies(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data)], stdout=subprocess.PIPE, text=True, env=env
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            with pytest.raises(DataFolderInUse) as refused:
                await Engine.open(data, make_org(), clock=ManualClock())
            assert refused.value.pid == holder.pid
        finally:
            holder.kill()
            holder.wait()
    assert (data / LOCK_FILE).read_text().split() == [str(holder.pid)], "a dead holder's pid stays behind"
    engine = await Engine.open(data, make_org(), clock=ManualClock())
    try:
        assert (data / LOCK_FILE).read_text().split() == [str(os.getpid())], "its stale lock is taken over"
    finally:
        await engine.close()


def test_a_released_lock_lets_the_next_one_in(tmp_path: Path) -> None:
    first = FolderLock.acquire(tmp_path)
    first.release()
    first.release()
    second = FolderLock.acquire(tmp_path)
    second.release()


def test_the_default_folder_is_the_platform_user_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / "apc"
