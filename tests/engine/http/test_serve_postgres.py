"""`apc serve --database URL`: the URL's password never reaches the log, whether the server starts or
cannot reach the database."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from engine.http.serve import EXIT_FAILED, ServeOptions, serve
from tests.engine.http.test_serve import serve_once, write_config
from tests.support.ports import free_port

PASSWORD = "s3cret-in-the-url"


def _with_password(url: str) -> str:
    parts = urlsplit(url)
    return url.replace(f"//{parts.username}@", f"//{parts.username}:{PASSWORD}@", 1)


async def test_the_password_is_never_logged(
    tmp_path: Path, pg_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = _with_password(pg_database)  # trust authentication: the password is not checked
    options = ServeOptions(
        config=write_config(tmp_path), data=tmp_path / "data", port=free_port(), database=url
    )
    with caplog.at_level(logging.DEBUG):
        status, items = await serve_once(options)
    assert (status, [i["name"] for i in items]) == (0, ["screening"])
    serving = [r.getMessage() for r in caplog.records if r.getMessage().startswith("serving ")]
    assert len(serving) == 1 and ", database: postgresql://postgres:***@" in serving[0]
    assert all(PASSWORD not in r.getMessage() for r in caplog.records)

    unreachable = ServeOptions(
        config=write_config(tmp_path / "other"),
        data=tmp_path / "data2",
        port=free_port(),
        database=f"postgresql://postgres:{PASSWORD}@127.0.0.1:1/test?connect_timeout=1",
    )
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        assert await serve(unreachable, stop=asyncio.Event()) == EXIT_FAILED
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith("the database is unavailable: "), errors
    assert all(PASSWORD not in r.getMessage() for r in caplog.records)
