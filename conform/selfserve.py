"""`--self`: our own `apc serve` as a subprocess on a temporary org, so the runner stays a pure client.

The server is started exactly as a user would start it (`apc serve --config ... --data ... --port 0
--speed N`), its log goes to a file in the temporary folder, and its URL is read from the one log line
that names the endpoint it serves. When the run is over it gets SIGTERM, and SIGKILL if it lingers.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from conform import config
from conform.setup import DEFAULT_SPEED, write_setup

START_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 10.0
SERVING = re.compile(r"serving (https?://\S+/mcp)")
SERVE = "import sys; from apc.cli import main; sys.exit(main())"
"""`apc` itself, run by this interpreter: the console script may not be on PATH."""


class ServerStartError(Exception):
    """Our own server did not come up; the message carries the end of its log."""


@contextlib.asynccontextmanager
async def own_server(speed: float = DEFAULT_SPEED) -> AsyncIterator[config.ConformConfig]:
    """Serve a fresh org with the runner's processes; yields the conform config pointing at it."""
    with tempfile.TemporaryDirectory(prefix="apc-conform-") as tmp:
        root = Path(tmp)
        files = write_setup(root / "setup", speed)
        log_path = root / "serve.log"
        command = [
            sys.executable, "-c", SERVE, "serve", "--config", str(files.org), "--data", str(root / "data"),
            "--port", "0", "--speed", f"{speed:g}",
        ]  # fmt: skip
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        with log_path.open("w", encoding="utf-8") as log:
            drain: asyncio.Task[None] | None = None
            try:
                url = await _serving_url(process, log, log_path)
                drain = asyncio.create_task(_copy(process, log))
                loaded = config.load(files.conform)
                yield replace(loaded, servers=(url,))
            finally:
                await _stop(process)
                if drain is not None:
                    await drain


async def _serving_url(process: asyncio.subprocess.Process, log: TextIO, log_path: Path) -> str:
    assert process.stderr is not None
    try:
        async with asyncio.timeout(START_TIMEOUT_SECONDS):
            while True:
                raw = await process.stderr.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace")
                log.write(line)
                found = SERVING.search(line)
                if found:
                    return found.group(1)
    except TimeoutError:
        pass
    log.flush()
    tail = log_path.read_text(encoding="utf-8").strip().splitlines()[-8:]
    raise ServerStartError("apc serve did not start:\n  " + "\n  ".join(tail or ["(no output)"]))


async def _copy(process: asyncio.subprocess.Process, log: TextIO) -> None:
    assert process.stderr is not None
    while raw := await process.stderr.readline():
        log.write(raw.decode("utf-8", "replace"))


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    process.terminate()
    try:
        await asyncio.wait_for(process.wait(), STOP_TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()


__all__ = ["DEFAULT_SPEED", "ServerStartError", "own_server"]
