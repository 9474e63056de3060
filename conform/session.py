"""What a check works with: calls as any of the config's identities, every answer checked on the way.

`Session.call` is the one place an answer comes back, so no check can forget to:

- check the envelope against the tool's result schema (or `tool-error.json` for an error);
- make sure no token handed out so far appears in a result that must never carry one (spec §6 rule 2);
- note the server's time from every write, for waits on the server's clock;
- record the runs and uploads the conformance run created, for the report and the cleanup.

The runner never assumes it is alone on the server: checks look only at the runs they started, and
read lists page by page until they have seen those runs.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from conform.catalog import Shipped, earlier, shipped
from conform.client import Connection, TransportError
from conform.clock import ServerClock, parse_time
from conform.config import Actor, ConformConfig
from conform.contracts import Contracts
from conform.expect import CheckFailed, fail, only, show

T = TypeVar("T")

WRITES = ("start_run", "claim", "renew", "upload", "submit", "escalate", "decide", "cancel", "send_event")
VIEW_TOOLS = ("start_run", "get_run", "submit", "decide", "escalate", "cancel")
TOKEN_FREE = (*VIEW_TOOLS, "get_work", "list_runs", "list_processes", "describe")
"""Tools whose results must never carry a token."""
NAMED_ISSUES = ("run_ended", "already_decided", "claimed_by_you", "claimed_by_other", "not_ready")
"""Issues tools.md names for `conflict`: each is its own line in the coverage."""

MARGIN_REAL_SECONDS = 10.0
MARGIN_SERVER_SECONDS = 60.0
"""How long after a due time a server may take to apply its timer before a check gives up on it:
whichever is longer of ten real seconds and a minute of server time."""
POLL_SECONDS = 0.2


def rid() -> str:
    return str(uuid.uuid4())


def wire(value: Any) -> str:
    """A value as JSON text with its key order: what "the original result, byte for byte" compares."""
    return json.dumps(value, ensure_ascii=False)


@dataclass
class Records:
    """What the whole conformance run created and saw, shared by every check."""

    runs: dict[str, dict[str, str]] = field(default_factory=dict)
    """Run id to `{process, mode}` of every run a check started."""
    uploads: list[str] = field(default_factory=list)
    tokens: set[str] = field(default_factory=set)


@dataclass
class Shared:
    """The conformance run's state every session reads: connection, contracts, what describe said."""

    connection: Connection
    contracts: Contracts
    config: ConformConfig
    clock: ServerClock
    described: dict[str, Any]
    versions: dict[str, int]
    """The latest published version of each of the runner's processes."""
    records: Records = field(default_factory=Records)
    trace: Callable[[dict[str, Any]], None] | None = None
    """Sees every call and its answer (`--trace`)."""


class Session:
    def __init__(self, shared: Shared, check: str = "setup") -> None:
        self.shared = shared
        self.check = check
        self.clock = shared.clock
        self.covered: set[str] = set()
        """Error answers this check provoked on purpose (`tool/code`, `tool/conflict:issue`)."""
        actors = shared.config.actors
        self.agent = actors["agent1"]
        self.agent2 = actors["agent2"]
        self.person1 = actors["person1"]
        self.person2 = actors["person2"]
        self.outsider = actors["outsider"]
        self.operator = actors["operator"]

    # --- what the server said -------------------------------------------------------------------

    @property
    def described(self) -> dict[str, Any]:
        return self.shared.described

    @property
    def lease(self) -> int:
        return int(self.described["leaseSeconds"])

    @property
    def group(self) -> str:
        return self.shared.config.group

    def offers(self, profile: str) -> bool:
        return profile in self.described["profiles"]

    def version(self, process: str) -> int:
        return self.shared.versions[process]

    @staticmethod
    def process(name: str) -> Shipped:
        return shipped()[name]

    @staticmethod
    def earlier(name: str) -> Shipped:
        return earlier()[name]

    def cover(self, *keys: str) -> None:
        """Note coverage no single refusal shows, such as a precedence step between two errors."""
        self.covered.update(keys)

    # --- calls ------------------------------------------------------------------------------------

    async def call(self, who: Actor, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call exactly as given; the envelope is checked before it is returned."""
        try:
            reply = await self.shared.connection.call(who, tool, arguments)
        except TransportError as exc:
            fail(str(exc))
        envelope = reply.envelope
        if self.shared.trace is not None:
            self.shared.trace(
                {
                    "check": self.check,
                    "as": who.name,
                    "server": reply.server,
                    "tool": tool,
                    "arguments": arguments,
                    "answer": envelope,
                }
            )
        problems = self.shared.contracts.problems(tool, envelope)
        if problems:
            fail(f"{tool} answer breaks {self.shared.contracts.source}: {'; '.join(problems[:3])}")
        if envelope["ok"]:
            self._note(tool, envelope["data"])
        return envelope

    def _note(self, tool: str, data: Any) -> None:
        records = self.shared.records
        if tool in TOKEN_FREE:
            text = wire(data)
            if any(token in text for token in records.tokens):
                fail(f"{tool} answer carries a token (spec §6 rule 2)")
        if tool in ("claim", "renew"):
            records.tokens.add(data["token"])
            try:
                expires = parse_time(data["expiresAt"])
            except ValueError:
                fail(f"{tool}: expiresAt {data['expiresAt']!r} is not an RFC 3339 time")
            self.clock.saw(expires - timedelta(seconds=self.lease))
        elif tool == "start_run":
            records.runs.setdefault(
                data["run"]["id"], {"process": data["run"]["process"], "mode": data["run"]["mode"]}
            )
            self.clock.saw_text(data["run"]["startedAt"])
        elif tool in VIEW_TOOLS and tool != "get_run":
            self.clock.saw_text(data["run"]["updatedAt"])
        elif tool == "upload" and data["id"] not in records.uploads:
            records.uploads.append(data["id"])

    async def send(self, who: Actor, tool: str, **arguments: Any) -> dict[str, Any]:
        """A call with a fresh requestId for writes that do not name one."""
        if tool in WRITES:
            arguments.setdefault("requestId", rid())
        return await self.call(who, tool, arguments)

    async def ok(self, who: Actor, tool: str, **arguments: Any) -> Any:
        envelope = await self.send(who, tool, **arguments)
        if envelope["ok"] is not True:
            error = envelope["error"]
            fail(f"{tool} as {who.name}: expected ok, got {_error_text(error)}")
        return envelope["data"]

    async def refused(
        self, who: Actor, tool: str, code: str, issues: list[str] | None = None, **arguments: Any
    ) -> dict[str, Any]:
        """The call fails with `code` (and exactly `issues` when given, in any order, once each)."""
        envelope = await self.send(who, tool, **arguments)
        if envelope["ok"]:
            fail(f"{tool} as {who.name}: expected {code}{_issues_text(issues)}, got ok")
        error: dict[str, Any] = envelope["error"]
        if error["code"] != code:
            fail(f"{tool} as {who.name}: expected {code}{_issues_text(issues)}, got {_error_text(error)}")
        if issues is not None:
            got = error.get("issues")
            if got is None or sorted(got) != sorted(issues) or len(set(got)) != len(got):
                fail(f"{tool} as {who.name}: expected {code} with issues {show(issues)}, got {show(got)}")
        self.covered.add(f"{tool}/{code}")
        for issue in error.get("issues") or []:
            if code == "conflict" and issue in NAMED_ISSUES:
                self.covered.add(f"{tool}/{code}:{issue}")
        return error

    # --- the common steps of a run ------------------------------------------------------------------

    async def start(
        self,
        process: str,
        inputs: dict[str, Any],
        who: Actor | None = None,
        *,
        mode: str = "test",
        **extra: Any,
    ) -> Any:
        """A run of `process`, in `mode` "test" unless the check needs a live one."""
        view = await self.ok(
            who or self.agent, "start_run", process=process, inputs=inputs, mode=mode, **extra
        )
        return view

    async def view(self, run_id: str, who: Actor | None = None) -> Any:
        return await self.ok(who or self.operator, "get_run", runId=run_id)

    async def claim(self, run_id: str, step_id: str, who: Actor | None = None) -> Any:
        return await self.ok(who or self.agent, "claim", runId=run_id, stepId=step_id)

    async def submit(
        self,
        token: str,
        output: dict[str, Any],
        who: Actor | None = None,
        summary: str = "Done.",
        **extra: Any,
    ) -> Any:
        return await self.ok(
            who or self.agent, "submit", token=token, output=output, summary=summary, **extra
        )

    async def work(
        self, run_id: str, step_id: str, output: dict[str, Any], who: Actor | None = None, **extra: Any
    ) -> Any:
        """Claim `step_id` and submit `output`: the view after the step completed."""
        claimed = await self.claim(run_id, step_id, who)
        return await self.submit(claimed["token"], output, who, summary=f"Did {step_id}.", **extra)

    async def upload(self, content: bytes = b"screening report", who: Actor | None = None) -> Any:
        import base64

        return await self.ok(
            who or self.agent,
            "upload",
            fileName="report.txt",
            contentType="text/plain",
            contentBase64=base64.b64encode(content).decode(),
        )

    async def decide(
        self, who: Actor, view: dict[str, Any], step_id: str, decision: str, **extra: Any
    ) -> Any:
        """Decide the work item of `step_id` in `view` with the snapshot that view carries."""
        item = work_item(view, step_id)
        return await self.ok(
            who,
            "decide",
            runId=view["run"]["id"],
            workItemId=item["id"],
            snapshot=item["snapshot"],
            decision=decision,
            **extra,
        )

    async def everything(self, who: Actor, tool: str, **arguments: Any) -> list[Any]:
        """Every item of a paged read (`get_work`, `list_runs`, `list_processes`), page by page."""
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(10_000):
            extra = {"cursor": cursor} if cursor is not None else {}
            data = await self.ok(who, tool, **arguments, **extra)
            items.extend(data["items"])
            cursor = data["nextCursor"]
            if cursor is None:
                return items
        fail(f"{tool}: paging did not end after 10000 pages")

    async def agent_items(self, who: Actor, runs: list[str], process: str | None = None) -> list[Any]:
        """`who`'s get_work items of these runs, in the order get_work lists them."""
        extra = {"process": process} if process else {}
        listed = await self.everything(who, "get_work", limit=100, **extra)
        return [item for item in listed if item["runId"] in runs]

    # --- time ---------------------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock.now()

    async def sleep_until(self, when: datetime) -> None:
        """Sleep until the server's clock has (by our estimate) passed `when`."""
        while True:
            ahead = (when - self.clock.now()).total_seconds()
            if ahead <= 0:
                return
            await asyncio.sleep(min(self.clock.real_seconds(ahead) + 0.01, 5.0))

    async def until(self, what: str, probe: Callable[[], Awaitable[T | None]], after: datetime) -> T:
        """Wait for the server's clock to pass `after`, then poll `probe` until it answers; fail when
        the server still has not done `what` well after that time."""
        await self.sleep_until(after)
        margin = max(MARGIN_SERVER_SECONDS, MARGIN_REAL_SECONDS * self.clock.speed)
        deadline = after + timedelta(seconds=margin)
        while True:
            found = await probe()
            if found is not None:
                return found
            if self.clock.now() > deadline:
                fail(
                    f"expected {what} after {after:%Y-%m-%dT%H:%M:%SZ}, still not at about {self.clock.now():%H:%M:%SZ}"
                )
            await asyncio.sleep(POLL_SECONDS)

    async def until_view(
        self,
        run_id: str,
        what: str,
        test: Callable[[dict[str, Any]], bool],
        after: datetime,
        who: Actor | None = None,
    ) -> Any:
        """The run view once `test` holds for it, polled from when the server's clock passes `after`."""

        async def probe() -> dict[str, Any] | None:
            view = await self.view(run_id, who)
            return view if test(view) else None

        try:
            return await self.until(what, probe, after)
        except CheckFailed as failed:
            view = await self.view(run_id, who)
            raise CheckFailed(f"{failed}; step states {show(states(view))}") from None


def _error_text(error: dict[str, Any]) -> str:
    issues = error.get("issues")
    return f"{error.get('code')} ({error.get('message')})" + (f" {show(issues)}" if issues else "")


def _issues_text(issues: list[str] | None) -> str:
    return f" {show(issues)}" if issues else ""


def states(view: dict[str, Any]) -> dict[str, str | None]:
    return {s["id"]: s["state"] for s in view["steps"]}


def step_entry(view: dict[str, Any], step_id: str) -> dict[str, Any]:
    found = [s for s in view["steps"] if s["id"] == step_id]
    return dict(only(f"steps entry {step_id}", found))


def work_item(view: dict[str, Any], step_id: str) -> dict[str, Any]:
    found = [w for w in view["workItems"] if w["stepId"] == step_id]
    return dict(only(f"work items of step {step_id}", found))


def at_offset(time_text: str, seconds: float) -> str:
    """A wire time `seconds` after another (second precision, UTC)."""
    when = parse_time(time_text) + timedelta(seconds=seconds)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")
