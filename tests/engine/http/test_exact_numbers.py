"""Numbers are kept exactly (spec §2.3: a server must not round them). The MCP SDK parses a request
into floats before the engine sees it, so the endpoint reads the raw body: a number whose text a
64-bit float would change, or that is not finite, is `invalid`, naming the argument path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.core import Engine
from engine.http.app import RunningServer
from tests.engine.http.http_support import AGENT_TOKEN, MIRA_TOKEN, err, ok
from tests.support.processes import write_process

AMOUNTS = """
---
name: amounts
description: Record an amount.
inputs:
  amount: number
  extra: { type: object, optional: true }
steps:
  - id: done
    finish: done
---
"""


async def raw_call(url: str, token: str, tool: str, arguments: str) -> dict[str, Any]:
    """A tools/call whose arguments are sent as exactly this JSON text."""
    body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' + tool + '","arguments":'
    body += arguments + "}}"
    async with httpx.AsyncClient() as client:
        response = await client.post(
            url,
            content=body.encode(),
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            },
        )
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    envelope: dict[str, Any] = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == envelope
    assert result["isError"] is (not envelope["ok"])
    return envelope


def start(amount: str, extra: str = "") -> str:
    more = f',"extra":{extra}' if extra else ""
    return '{"process":"amounts","inputs":{"amount":' + amount + more + '},"requestId":"' + amount + '"}'


@pytest.fixture
async def amounts(engine: Engine, tmp_path: Path) -> None:
    assert (await engine.publish(write_process(tmp_path / "more", AMOUNTS), {})).ok


INEXACT = [
    "1.00000000000000000001",
    "9007199254740993",
    "0.30000000000000000001",
    "1e-400",
    "123456789012345678",
]
NON_FINITE = ["1e309", "-1e309", "NaN", "Infinity", "-Infinity"]


@pytest.mark.parametrize("text", INEXACT)
async def test_a_number_a_float_would_round_is_invalid(
    server: RunningServer, amounts: None, text: str
) -> None:
    reply = await raw_call(server.url, MIRA_TOKEN, "start_run", start(text))
    err(reply, "invalid", [f"inputs.amount: {text} cannot be kept exactly (a 64-bit float would round it)"])


@pytest.mark.parametrize("text", NON_FINITE)
async def test_a_number_that_is_not_finite_is_invalid(
    server: RunningServer, amounts: None, text: str
) -> None:
    reply = await raw_call(server.url, MIRA_TOKEN, "start_run", start(text))
    err(reply, "invalid", [f"inputs.amount: {text} is not a finite number"])


async def test_every_bad_number_is_named_with_its_path(server: RunningServer, amounts: None) -> None:
    reply = await raw_call(
        server.url, MIRA_TOKEN, "start_run", start("1", '{"a":[1,1e400,{"b":NaN}],"c":0.1}')
    )
    err(
        reply,
        "invalid",
        [
            "inputs.extra.a[1]: 1e400 is not a finite number",
            "inputs.extra.a[2].b: NaN is not a finite number",
        ],
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.1", 0.1),
        ("1e20", 1e20),
        ("100000000000000000000", 10**20),
        ("-0", 0),
        ("5e-324", 5e-324),
        ("2.50", 2.5),
    ],
)
async def test_a_number_a_float_keeps_exactly_is_accepted_and_served_as_given(
    server: RunningServer, amounts: None, text: str, value: float
) -> None:
    reply = await raw_call(server.url, MIRA_TOKEN, "start_run", start(text))
    assert ok(reply, "start_run")["data"]["inputs"] == {"amount": value}


async def test_numbers_outside_the_arguments_are_left_to_the_protocol(server: RunningServer) -> None:
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        '"params":{"name":"describe","arguments":{},"_meta":{"x":1e999}}}'
    )
    async with httpx.AsyncClient() as client:
        response = await client.post(
            server.url,
            content=body.encode(),
            headers={
                "Authorization": f"Bearer {AGENT_TOKEN}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            },
        )
    assert response.status_code == 200
    ok(response.json()["result"]["structuredContent"], "describe")
