"""The secrets file (engine/keys.py): one file outside the database holds every server secret.

Created owner-only on first start, reused after, named by `[server] secrets_file` when several servers
share it, and an older data folder's link-signing key moves into it from the database.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import LEGACY_FILE_URL_KEY, Engine
from engine.keys import KEY_NAMES, SECRETS_FILE, ServerKeys, load_keys
from engine.org import ConfigError, OrgConfig, ServerSettings
from tests.engine.engine_support import make_org


async def _open(data: Path, org: OrgConfig | None = None) -> Engine:
    return await Engine.open(data, org or make_org(), clock=ManualClock())


def _db_bytes(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data.glob("engine.db*"))


async def test_the_first_start_creates_an_owner_only_secrets_file_and_later_starts_reuse_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    engine = await _open(data)
    first = engine.keys
    url = engine.files.signed_url("f_1")
    await engine.close()

    path = data / SECRETS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len({first.file_url, first.cursor, first.replay}) == 3
    assert all(len(key) == 32 for key in (first.file_url, first.cursor, first.replay))
    for name in KEY_NAMES:
        assert f'{name} = "{getattr(first, name).hex()}"' in path.read_text()
    stored = _db_bytes(data)
    for key in (first.file_url, first.cursor, first.replay):
        assert key.hex().encode() not in stored and key not in stored

    engine = await _open(data)
    try:
        assert engine.keys == first
        expires, sig = url.split("?expires=")[1].split("&sig=")
        assert engine.files.verify_signed("f_1", int(expires), sig) is True
    finally:
        await engine.close()


async def test_a_secrets_file_named_in_the_org_config_is_used_instead(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "apc.key"
    org = make_org()
    org.server = ServerSettings(secrets_file=shared)
    one = await _open(tmp_path / "one", org)
    two = await _open(tmp_path / "two", org)
    try:
        assert one.keys == two.keys
        assert shared.is_file()
        assert not (tmp_path / "one" / SECRETS_FILE).exists()
        assert not (tmp_path / "two" / SECRETS_FILE).exists()
    finally:
        await one.close()
        await two.close()


def test_the_org_config_names_the_secrets_file_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "org.toml").write_text("[server]\nsecrets_file = 'keys/apc.key'\n")
    org = OrgConfig.load(tmp_path / "org.toml")
    assert org.server.secrets_file == (tmp_path / "keys" / "apc.key").resolve()


async def test_an_older_data_folder_moves_its_link_key_out_of_the_database(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = await _open(data)
    await engine.close()
    (data / SECRETS_FILE).unlink()
    legacy = "ab" * 32
    db = sqlite3.connect(data / "engine.db")
    db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (LEGACY_FILE_URL_KEY, legacy))
    db.commit()
    db.close()

    engine = await _open(data)
    try:
        assert engine.keys.file_url == bytes.fromhex(legacy)
        assert await engine.store.get_meta(LEGACY_FILE_URL_KEY) is None
        assert f'file_url = "{legacy}"' in (data / SECRETS_FILE).read_text()
    finally:
        await engine.close()


FIXED = ServerKeys(b"\x01" * 32, b"\x02" * 32, b"\x03" * 32).text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("file_url = 'x'\n", "file_url: required, 64 hex digits"),
        (FIXED.replace("cursor =", "kursor ="), "kursor: unknown key"),
        (FIXED.replace('replay = "', 'replay = "zz'), "replay: required"),
        ("not toml [\n", "not a secrets file"),
    ],
    ids=["short", "unknown-key", "not-hex", "not-toml"],
)
async def test_a_malformed_secrets_file_stops_the_start_naming_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / SECRETS_FILE).write_text(text)
    with pytest.raises(ConfigError) as caught:
        await _open(data)
    assert str(caught.value).startswith(f"{data / SECRETS_FILE}: ")
    assert message in str(caught.value)


def test_a_file_another_server_created_first_is_read_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / SECRETS_FILE
    theirs = ServerKeys.generate()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(theirs.text())
    keys, created = load_keys(path)
    assert (keys, created) == (theirs, False)
    assert [p.name for p in tmp_path.iterdir()] == [SECRETS_FILE]


def test_a_secrets_file_open_to_others_is_used_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / SECRETS_FILE
    path.write_text(ServerKeys.generate().text())
    path.chmod(0o644)
    with caplog.at_level("WARNING", logger="engine.keys"):
        load_keys(path)
    assert [r.getMessage() for r in caplog.records] == [
        f"the secrets file {path} is open to other users (mode 644); chmod 600 it"
    ]
