"""The fourteen tools as `ToolClient` methods: each sends exactly its arguments, a fresh `requestId`
on every write, and nothing for an argument left out."""

from __future__ import annotations

from console.client.base import ToolClient
from engine.identity import person


async def test_the_fourteen_tools_send_exactly_their_arguments() -> None:
    sent: list[tuple[str, dict]] = []

    class Recording(ToolClient):
        async def call(self, tool: str, arguments: dict) -> dict:
            sent.append((tool, arguments))
            return {"ok": True, "data": {}}

    numbers = iter(range(1, 100))
    client = Recording(person("ops@example.com"), request_ids=lambda: f"q{next(numbers)}")
    await client.describe()
    await client.list_processes()
    await client.start_run("p", {"a": 1}, mode="test")
    await client.get_run("r_1")
    await client.get_work(limit=5)
    await client.claim("r_1", "s")
    await client.renew("tok")
    await client.upload("a.txt", "text/plain", b"hi")
    await client.submit("tok", {"x": 1}, "did it", next="b", reason="because")
    await client.escalate("tok", "stuck")
    await client.decide(
        {
            "runId": "r_1",
            "workItemId": "w_1",
            "snapshot": "s1",
            "requestId": "<new UUID>",
            "decision": "approved",
        }
    )
    await client.cancel("r_1", "dup")
    await client.send_event("r_1", "paid")
    await client.list_runs(state="ended", inputs={"a": 1})
    assert sent == [
        ("describe", {}),
        ("list_processes", {}),
        ("start_run", {"process": "p", "inputs": {"a": 1}, "mode": "test", "requestId": "q1"}),
        ("get_run", {"runId": "r_1"}),
        ("get_work", {"limit": 5}),
        ("claim", {"runId": "r_1", "stepId": "s", "requestId": "q2"}),
        ("renew", {"token": "tok", "requestId": "q3"}),
        (
            "upload",
            {"fileName": "a.txt", "contentType": "text/plain", "contentBase64": "aGk=", "requestId": "q4"},
        ),
        (
            "submit",
            {
                "token": "tok",
                "output": {"x": 1},
                "summary": "did it",
                "next": "b",
                "reason": "because",
                "requestId": "q5",
            },
        ),
        ("escalate", {"token": "tok", "note": "stuck", "requestId": "q6"}),
        (
            "decide",
            {
                "runId": "r_1",
                "workItemId": "w_1",
                "snapshot": "s1",
                "decision": "approved",
                "requestId": "q7",
            },
        ),
        ("cancel", {"runId": "r_1", "reason": "dup", "requestId": "q8"}),
        ("send_event", {"runId": "r_1", "name": "paid", "requestId": "q9"}),
        ("list_runs", {"state": "ended", "inputs": {"a": 1}}),
    ]
