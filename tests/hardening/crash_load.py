"""Concurrent load on a served engine, recording every write the server acknowledged.

Agents claim, renew and submit; reviewers approve or reject; the operator sends the go-ahead event
and now and then cancels; a starter keeps new runs coming. Every write carries a fresh `requestId`
and a unique marker (the submission's summary, the decision's note, the event's data), so after a
crash each acknowledged write can be found again in run data and replayed. A call the connection
dropped (the server was killed) is not acknowledged and is forgotten.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.hardening.serve_support import AGENTS, OPERATOR, REVIEWERS
from tests.support.calls import rid
from tests.support.rpc import Rpc


@dataclass(frozen=True)
class Ack:
    token: str
    tool: str
    arguments: dict[str, Any]
    envelope: dict[str, Any]


@dataclass
class Load:
    seed: int
    acks: list[Ack] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    tickets: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    async def write(
        self, rpc: Rpc, token: str, tool: str, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        arguments = {**arguments, "requestId": rid()}
        try:
            envelope = await rpc.call(token, tool, arguments)
        except (httpx.TransportError, AssertionError):
            return None
        self.acks.append(Ack(token, tool, arguments, envelope))
        if tool == "start_run" and envelope["ok"]:
            self.runs.append(envelope["data"]["run"]["id"])
        return envelope

    async def read(self, rpc: Rpc, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return await rpc.call(token, tool, arguments)
        except (httpx.TransportError, AssertionError):
            return None

    async def starter(self, rpc: Rpc) -> None:
        token = next(iter(REVIEWERS.values()))
        while True:
            self.tickets += 1
            await self.write(
                rpc, token, "start_run", {"process": "crash-flow", "inputs": {"ticket": f"T-{self.tickets}"}}
            )
            await asyncio.sleep(self.rng.uniform(0.02, 0.1))

    async def agent(self, rpc: Rpc, token: str) -> None:
        while True:
            work = await self.read(rpc, token, "get_work", {"limit": 5})
            items = work["data"]["items"] if work and work["ok"] else []
            if not items:
                await asyncio.sleep(0.05)
                continue
            item = self.rng.choice(items)
            claimed = await self.write(
                rpc, token, "claim", {"runId": item["runId"], "stepId": item["stepId"]}
            )
            if not claimed or not claimed["ok"]:
                continue
            lease = claimed["data"]["token"]
            if self.rng.random() < 0.5:
                renewed = await self.write(rpc, token, "renew", {"token": lease, "progress": rid()})
                if not renewed or not renewed["ok"]:
                    continue
                lease = renewed["data"]["token"]
            await self.write(
                rpc, token, "submit", {"token": lease, "output": {"note": rid()}, "summary": rid()}
            )

    async def reviewer(self, rpc: Rpc, token: str) -> None:
        while True:
            work = await self.read(rpc, token, "get_work", {"limit": 5})
            items = work["data"]["items"] if work and work["ok"] else []
            if not items:
                await asyncio.sleep(0.05)
                continue
            item = self.rng.choice(items)["workItem"]
            decision = "rejected" if self.rng.random() < 0.2 else "approved"
            arguments = {**item["decide"]["arguments"], "decision": decision, "note": rid()}
            arguments.pop("requestId")
            await self.write(rpc, token, "decide", arguments)

    async def operator(self, rpc: Rpc) -> None:
        token = OPERATOR[1]
        while True:
            await asyncio.sleep(self.rng.uniform(0.05, 0.15))
            if not self.runs:
                continue
            run_id = self.rng.choice(self.runs[-20:])
            if self.rng.random() < 0.05:
                await self.write(rpc, token, "cancel", {"runId": run_id, "reason": rid()})
            else:
                await self.write(
                    rpc, token, "send_event", {"runId": run_id, "name": "go", "data": {"ref": rid()}}
                )

    async def drive(self, url: str, until_acks: int, kill: Callable[[], None] | None = None) -> None:
        """Run every worker until `until_acks` more writes were acknowledged.

        With `kill`, it is called at that moment while the workers still have calls in flight (the
        crash happens under load); they are stopped once those calls have failed.
        """
        target = len(self.acks) + until_acks
        async with httpx.AsyncClient(timeout=30) as client:
            rpc = Rpc(client, url)
            tasks = [
                asyncio.create_task(self.starter(rpc)),
                *(asyncio.create_task(self.agent(rpc, t)) for t in AGENTS.values()),
                *(asyncio.create_task(self.reviewer(rpc, t)) for t in REVIEWERS.values()),
                asyncio.create_task(self.operator(rpc)),
            ]
            try:
                while len(self.acks) < target:
                    await asyncio.sleep(0.005)
                    failed = [t.exception() for t in tasks if t.done()]
                    if failed and failed[0] is not None:
                        raise failed[0]
                if kill is not None:
                    kill()
                    await asyncio.sleep(0.3)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
