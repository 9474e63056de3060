"""Fixtures: an engine with the test processes of demo_support published on a ManualClock, and its endpoint;
an engine with the scripted evaluator, customer-refund and the vetting process of demo_support."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.http.app import RunningServer, start_server
from tests.demo.demo_support import (
    PROCESSES,
    SAMPLES,
    VETTING,
    VETTING_ANSWERS,
    make_check_org,
    make_org,
)
from tests.support.processes import publish, write_process


@pytest.fixture
async def engine(tmp_path: Path, clock: ManualClock) -> AsyncIterator[Engine]:
    eng = await Engine.open(tmp_path / "data", make_org(), clock=clock)
    try:
        for text, bind in PROCESSES:
            await publish(eng, tmp_path, text, bind)
        yield eng
    finally:
        await eng.close()


@pytest.fixture
async def server(engine: Engine) -> AsyncIterator[RunningServer]:
    running = await start_server(engine, port=0)
    try:
        yield running
    finally:
        await running.stop()


@pytest.fixture
async def checked(tmp_path: Path, clock: ManualClock) -> AsyncIterator[Engine]:
    answers = tmp_path / "answers.toml"
    answers.write_text((SAMPLES / "check-answers.toml").read_text() + VETTING_ANSWERS)
    eng = await Engine.open(tmp_path / "checked", make_check_org(answers), clock=clock)
    try:
        for folder, bind in (
            (SAMPLES / "customer-refund", {"support-lead": "support-lead"}),
            (write_process(tmp_path / "processes", VETTING), {}),
        ):
            published = await eng.publish(folder, bind)
            assert published.ok, published.issues
        yield eng
    finally:
        await eng.close()
