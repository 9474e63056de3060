"""`/metrics` in the Prometheus text format: tool calls by tool and code, their latency, HTTP answers
by status, and what is open right now (runs, work items, overdue steps, the notification backlog).

Counters and histograms are kept as calls happen; the gauges are counted from the store's indexes
when Prometheus scrapes, so they are exact and cost nothing between scrapes. Each app has its own
registry (several servers can live in one process: tests, the console beside a demo).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine.http.access import current_request
from engine.identity import Identity
from engine.store.base import StoreCounts

METRICS_PATH = "/metrics"
UNKNOWN_TOOL = "unknown"
"""The label of a call to a tool this server does not have: callers cannot mint label values."""
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Counted(Protocol):
    async def counts(self) -> StoreCounts: ...


class CallEngine(Protocol):
    @property
    def tools(self) -> list[str]: ...

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class Metrics:
    def __init__(self, tools: Sequence[str]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._tools = frozenset(tools)
        self.calls = Counter(
            "apc_tool_calls",
            "Tool calls answered, by tool and by code (ok, an error code, or unexpected).",
            ["tool", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "apc_tool_call_duration_seconds",
            "Time to answer a tool call, by tool.",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.requests = Counter(
            "apc_http_requests", "HTTP requests answered, by status.", ["status"], registry=self.registry
        )
        self.open_runs = Gauge("apc_open_runs", "Runs active or waiting.", registry=self.registry)
        self.open_work_items = Gauge(
            "apc_open_work_items", "Work items open for people.", registry=self.registry
        )
        self.overdue = Gauge(
            "apc_overdue_items",
            "Unfinished steps past their due (work items and agent steps).",
            registry=self.registry,
        )
        self.outbox = Gauge(
            "apc_outbox_backlog",
            "Notifications not yet delivered to their [[notify]] targets.",
            registry=self.registry,
        )

    def label(self, tool: str) -> str:
        return tool if tool in self._tools else UNKNOWN_TOOL

    def observe_call(self, tool: str, code: str, seconds: float) -> None:
        self.calls.labels(tool=self.label(tool), code=code).inc()
        self.latency.labels(tool=self.label(tool)).observe(seconds)

    def observe_request(self, status: int) -> None:
        self.requests.labels(status=str(status)).inc()

    async def render(self, store: Counted, accept: str | None = None) -> tuple[bytes, str]:
        """The exposition in the format the scraper's `Accept` asks for, and its content type."""
        counts = await store.counts()
        self.open_runs.set(counts.open_runs)
        self.open_work_items.set(counts.open_work_items)
        self.overdue.set(counts.overdue_steps)
        self.outbox.set(counts.outbox_backlog)
        encode, content_type = choose_encoder(accept or "")
        return encode(self.registry), content_type


class MeteredEngine:
    """The engine as the MCP endpoint sees it, with every call counted and timed."""

    def __init__(self, engine: CallEngine, metrics: Metrics) -> None:
        self._engine = engine
        self._metrics = metrics

    @property
    def tools(self) -> list[str]:
        return self._engine.tools

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        code = "unexpected"
        try:
            envelope = await self._engine.call(identity, tool, arguments)
            code = "ok" if envelope.get("ok") else str(envelope.get("error", {}).get("code", "unexpected"))
            return envelope
        finally:
            self._metrics.observe_call(tool, code, time.perf_counter() - started)
            note_call(identity, tool, code)


def metrics_route(metrics: Metrics, store: Counted) -> Route:
    async def scrape(request: Request) -> Response:
        body, content_type = await metrics.render(store, request.headers.get("accept"))
        return Response(body, headers={"Content-Type": content_type})

    return Route(METRICS_PATH, endpoint=scrape, methods=["GET"])


def note_call(identity: Identity, tool: str, code: str) -> None:
    """Tell the request's log line which call it carried."""
    note = current_request()
    if note is not None:
        note.calls.append(f"{tool} {code}")
