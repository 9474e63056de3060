"""A PROCESS.md is kept, served and hashed exactly as written (spec §6 rule 5), CRLF line ends included."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from engine import document
from engine.core import Engine
from tests.engine.engine_support import MIRA, call, ok, start

pytestmark = pytest.mark.both_stores

CRLF_PROCESS = textwrap.dedent(
    """\
    ---
    name: crlf-process
    description: Written on a machine that ends lines with CRLF.
    steps:
      - id: work
        agent: Do the work.
      - id: done
        finish: done
    ---

    # CRLF

    Two lines
    of body.
    """
).replace("\n", "\r\n")


async def test_a_crlf_document_is_stored_served_and_hashed_as_written(engine: Engine, tmp_path: Path) -> None:
    folder = tmp_path / "crlf-process"
    folder.mkdir()
    (folder / "PROCESS.md").write_bytes(CRLF_PROCESS.encode())
    result = await engine.publish(folder, {})
    assert result.ok, result.issues

    record = await engine.store.get_version("crlf-process", 1)
    assert record is not None
    assert record.text == CRLF_PROCESS
    assert record.content_hash == document.load(CRLF_PROCESS).content_hash
    assert record.content_hash != document.load(CRLF_PROCESS.replace("\r\n", "\n")).content_hash

    run_id = (await start(engine, "crlf-process", {}))["run"]["id"]
    view = ok(await call(engine, MIRA, "get_run", runId=run_id), "get_run")
    assert view["body"] == "\r\n# CRLF\r\n\r\nTwo lines\r\nof body.\r\n"
    assert await engine.process_text("crlf-process", 1) == CRLF_PROCESS


async def test_republishing_the_same_crlf_file_keeps_its_version(engine: Engine, tmp_path: Path) -> None:
    folder = tmp_path / "crlf-process"
    folder.mkdir()
    (folder / "PROCESS.md").write_bytes(CRLF_PROCESS.encode())
    assert (await engine.publish(folder, {})).version == 1
    again = await engine.publish(folder, {})
    assert (again.ok, again.version, again.created) == (True, 1, False)
    (folder / "PROCESS.md").write_bytes(CRLF_PROCESS.replace("\r\n", "\n").encode())
    lf = await engine.publish(folder, {})
    assert (lf.ok, lf.version, lf.created) == (True, 2, True)
