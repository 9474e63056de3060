"""`apc --read-only` on the embedded engine: the data folder opens `mode=ro` and nothing in it changes,
whatever keys are pressed; no endpoint, no token, no write keys; Enter on a work item opens its run; a
folder that does not exist is an error (exit 2), not a new organization.

Only SQLite's own `-shm` index may change (and an empty `-wal` appear where none was)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from apc.cli import main
from console.app import ApcApp
from console.embedded.launch import AGENT_ID, open_embedded, open_read_only
from console.keys.registry import ACTIONS
from console.screens.run import RunScreen
from console.settings.config import ConsoleConfig
from engine.identity import agent
from tests.console.console_support import SCREENING, Agent, settle
from tests.support.processes import write_process

SHM = "-shm"


def contents(folder: Path) -> dict[str, str]:
    """Every file under `folder` but SQLite's shared-memory index, by path, with its hash."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.endswith(SHM)
    }


async def a_used_folder(tmp_path: Path) -> Path:
    """An embedded data folder with an escalated run and an approval waiting for the operator."""
    data = tmp_path / "data"
    samples = tmp_path / "samples"
    write_process(samples, SCREENING)
    session = await open_embedded(data, samples=samples, port=0)
    try:
        engine = session.client.engine  # type: ignore[attr-defined]
        worker = Agent(engine, agent(AGENT_ID))
        await worker.escalate(await worker.start("screening", {"vendorName": "Bolt"}), "The portal is down.")
        await worker.screen(await worker.start("screening", {"vendorName": "Acme"}))
    finally:
        assert session.close is not None
        await session.close()
    return data


EVERY_KEY = sorted(
    {key for spec in ACTIONS if spec.bound for key in spec.keys.split(",")}
    | {"enter", "escape", "tab", "down", "up", "1", "2", "3", "4"}
)


async def test_a_read_only_session_changes_no_byte_of_the_data_folder(tmp_path: Path) -> None:
    data = await a_used_folder(tmp_path)
    before = contents(data)
    assert {"engine.db", "org.toml", "secrets.key", "apc.lock"} <= set(before)
    app = ApcApp(lambda: open_read_only(data), read_only=True, live=False, config=ConsoleConfig())
    async with app.run_test(size=(120, 36)) as pilot:
        await app.ready.wait()
        assert app.session is not None and app.session.endpoint is None
        footer = " ".join(
            b.binding.description for b in app.screen.active_bindings.values() if b.binding.show
        )
        for word in ("Decide", "Start run", "Cancel", "Publish"):
            assert word not in footer
        assert not app.check_action("show_tab", ("endpoint",))
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunScreen), "Enter opens the item's run, not a form"
        for key in EVERY_KEY:
            if key in ("q", "ctrl+c"):
                continue
            await pilot.press(key)
            await pilot.pause()
            while len(app.screen_stack) > 2:
                await pilot.press("escape")
                await pilot.pause()
        await settle(pilot)
    after = contents(data)
    # SQLite reading a WAL database needs its -wal file: when the last writer removed it on close, a
    # read-only open makes it again, empty. Every file that was there is unchanged, byte for byte.
    empty = hashlib.sha256(b"").hexdigest()
    assert {name: digest for name, digest in after.items() if name not in before} in (
        {},
        {"engine.db-wal": empty},
    )
    assert {name: after.get(name) for name in before} == before


def test_read_only_on_a_folder_that_does_not_exist_is_an_error_not_a_new_org(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    assert main(["--read-only", "--data", str(missing)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"apc: error: no data folder at {missing}; --read-only opens an existing one and creates nothing\n"
    )
    assert not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--read-only", "--data", str(empty)]) == 2
    assert "holds no org.toml" in capsys.readouterr().err
    assert list(empty.iterdir()) == []
