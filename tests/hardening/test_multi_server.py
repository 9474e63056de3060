"""Three `apc serve` processes on one PostgreSQL database behave as one server (issue: scale-out).

Agents and people spread their calls over the three: concurrent claims of one step give one token,
concurrent decides one success, a run started on one server is finished through the others, timers
fire once with a server SIGKILLed before they are due, and a server SIGKILLed amid writes loses none
that it acknowledged. The servers start together, so they also migrate and publish at once.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.hardening.serve_support import AGENTS, REVIEWERS, Served, launch_serve, org_toml, wait_serving
from tests.support.calls import rid
from tests.support.rpc import Rpc

PROCESSES = {
    "relay": """
        ---
        name: relay
        description: Three agent steps in a row.
        steps:
          - id: one
            agent: First.
            output: { note: string }
          - id: two
            agent: Second.
            output: { note: string }
          - id: three
            agent: Third.
            output: { note: string }
          - id: done
            finish: finished
        ---
        """,
    "review": """
        ---
        name: review
        description: A reviewer approves.
        steps:
          - id: review
            person: reviewers
            approve: Approve.
          - id: done
            finish: approved
        ---
        """,
    "held": """
        ---
        name: held
        description: Wait until a time, then a reviewer's work.
        inputs:
          at: datetime
        steps:
          - id: hold
            wait_until: inputs.at
          - id: review
            person: reviewers
            approve: Approve.
          - id: done
            finish: approved
        ---
        """,
}

AGENT_TOKENS = list(AGENTS.values())
REVIEWER_TOKENS = list(REVIEWERS.values())


def _config(root: Path) -> Path:
    lines = [org_toml().replace("[server]\n", "[server]\nsecrets_file = 'secrets.key'\nfiles = 'files'\n", 1)]
    lines = [lines[0].split("[[processes]]")[0]]
    for name in PROCESSES:
        folder = root / "processes" / name
        folder.mkdir(parents=True)
        (folder / "PROCESS.md").write_text(textwrap.dedent(PROCESSES[name]).lstrip("\n"))
        bind = "{ reviewers = 'g_reviewers' }" if name != "relay" else "{}"
        lines.append(f"[[processes]]\npath = 'processes/{name}'\nbind = {bind}\n")
    path = root / "org.toml"
    path.write_text("\n".join(lines))
    return path


@pytest.fixture
def servers(tmp_path: Path, pg_database: str) -> Iterator[list[Served]]:
    config = _config(tmp_path)
    launched = [
        launch_serve(
            config, tmp_path / f"data{n}", tmp_path / f"serve{n}.log", extra=["--database", pg_database]
        )
        for n in range(3)
    ]
    try:
        yield [wait_serving(s) for s in launched]
    finally:
        for served in launched:
            if served.process.poll() is None:
                served.kill()


def ok(envelope: dict[str, Any]) -> Any:
    assert envelope["ok"] is True, envelope
    return envelope["data"]


async def test_three_servers_on_one_database_behave_as_one(servers: list[Served], pg_database: str) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        rpc = [Rpc(client, s.url) for s in servers]
        agent = AGENT_TOKENS[0]
        # They published together: one version of each process, the same on every server.
        listed = [ok(await r.call(agent, "list_processes", {}))["items"] for r in rpc]
        assert [sorted((i["name"], i["version"]) for i in items) for items in listed] == [
            [("held", 1), ("relay", 1), ("review", 1)]
        ] * 3

        # 50 concurrent claims of one step, spread over the servers and the agents: one token.
        run_id = ok(
            await rpc[0].call(agent, "start_run", {"process": "relay", "inputs": {}, "requestId": rid()})
        )["run"]["id"]
        claims = await asyncio.gather(
            *(
                rpc[n % 3].call(
                    AGENT_TOKENS[n % 3], "claim", {"runId": run_id, "stepId": "one", "requestId": rid()}
                )
                for n in range(50)
            )
        )
        winners = [n for n, c in enumerate(claims) if c["ok"]]
        assert len(winners) == 1 and claims[winners[0]]["data"]["token"]
        agent = AGENT_TOKENS[winners[0] % 3]  # the lease is the winner's: it submits
        assert {c["error"]["code"] for c in claims if not c["ok"]} == {"conflict"}

        # The run goes on through the other servers to its end.
        token = claims[winners[0]]["data"]["token"]
        ok(
            await rpc[1].call(
                agent, "submit", {"token": token, "output": {"note": "1"}, "summary": "s", "requestId": rid()}
            )
        )
        for n, step in ((2, "two"), (0, "three")):
            claimed = ok(
                await rpc[n].call(agent, "claim", {"runId": run_id, "stepId": step, "requestId": rid()})
            )
            ok(
                await rpc[(n + 1) % 3].call(
                    agent,
                    "submit",
                    {"token": claimed["token"], "output": {"note": step}, "summary": "s", "requestId": rid()},
                )
            )
        ended = ok(await rpc[1].call(agent, "get_run", {"runId": run_id}))
        assert (ended["run"]["state"], ended["run"]["outcome"]) == ("ended", "finished")

        # One requestId sent to all three at once: recorded once, every answer the first result.
        same = rid()
        starts = await asyncio.gather(
            *(r.call(agent, "start_run", {"process": "relay", "inputs": {}, "requestId": same}) for r in rpc)
        )
        assert len({ok(s)["run"]["id"] for s in starts}) == 1

        # 20 concurrent decides of one work item across the servers: one success.
        view = ok(
            await rpc[2].call(agent, "start_run", {"process": "review", "inputs": {}, "requestId": rid()})
        )
        [item] = view["workItems"]
        decides = await asyncio.gather(
            *(
                rpc[n % 3].call(
                    REVIEWER_TOKENS[n % 2],
                    "decide",
                    {
                        "runId": view["run"]["id"],
                        "workItemId": item["id"],
                        "snapshot": item["snapshot"],
                        "decision": "approved",
                        "requestId": rid(),
                    },
                )
                for n in range(20)
            )
        )
        assert len([d for d in decides if d["ok"]]) == 1
        assert {d["error"]["code"] for d in decides if not d["ok"]} == {"conflict"}

        # Timers: due in a few seconds, started on every server; one server is killed before they
        # are due. Each fires once: one work item and one new_work notification per run.
        at = (datetime.now(UTC) + timedelta(seconds=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
        held = [
            ok(
                await rpc[n % 3].call(
                    agent, "start_run", {"process": "held", "inputs": {"at": at}, "requestId": rid()}
                )
            )["run"]["id"]
            for n in range(9)
        ]
        servers[2].kill()
        fired = await _wait_for_new_work(pg_database, held, deadline_seconds=30)
        assert fired == {run: 1 for run in held}
        await asyncio.sleep(1.0)  # the live servers keep ticking: nothing fires a second time
        assert await _new_work(pg_database, held) == {run: 1 for run in held}

        # SIGKILL amid writes: every write server 1 acknowledged is there through server 0.
        acknowledged: list[str] = []

        async def writer(n: int) -> None:
            while True:
                reply = await rpc[1].call(
                    agent, "start_run", {"process": "relay", "inputs": {}, "requestId": f"k{n}-{rid()}"}
                )
                acknowledged.append(ok(reply)["run"]["id"])

        tasks = [asyncio.create_task(writer(n)) for n in range(4)]
        while len(acknowledged) < 20:
            await asyncio.sleep(0.01)
        servers[1].kill()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(e, httpx.HTTPError) for e in done), done
        for run in list(acknowledged):
            view = ok(await rpc[0].call(agent, "get_run", {"runId": run}))
            assert view["run"]["state"] == "active"
    for served in servers:
        text = served.log.read_text()
        assert "Traceback" not in text and " ERROR " not in text, text


async def _new_work(url: str, runs: list[str]) -> dict[str, int]:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cur = await conn.execute(
            "SELECT run_id, COUNT(*) FROM outbox WHERE kind = 'new_work' AND run_id = ANY(%s) GROUP BY run_id",
            (runs,),
        )
        return {str(row[0]): int(row[1]) for row in await cur.fetchall()}


async def _wait_for_new_work(url: str, runs: list[str], deadline_seconds: float) -> dict[str, int]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + deadline_seconds
    while True:
        counts = await _new_work(url, runs)
        if len(counts) == len(runs) or loop.time() > deadline:
            return counts
        await asyncio.sleep(0.2)
