"""What the console reads once and keeps: published documents and the server's limits.

A published version never changes, so its document (embedded mode only) is read once; `describe`'s
limits are the check thresholds a verdict was judged by. Together they give each verdict question the
bar it had to clear.
"""

from __future__ import annotations

from collections.abc import Callable

from console.client import Client
from console.client.wire import Limits
from console.views.render import BarOf
from console.views.verdict_bars import bar_for, step_bars
from engine.document.model import Process

StepBars = Callable[[str], BarOf]
"""A step id to the bar each verdict question on it had to clear."""


class Documents:
    def __init__(self, client: Client) -> None:
        self.client = client
        self._documents: dict[tuple[str, int], Process | None] = {}
        self._limits: Limits | None = None

    async def get(self, name: str, version: int) -> Process | None:
        """The published version's document, or None from a server that does not hand them out."""
        if not self.client.capabilities.process_document:
            return None
        key = (name, version)
        if key not in self._documents:
            self._documents[key] = await self.client.process_document(name, version)
        return self._documents[key]

    async def limits(self) -> Limits | None:
        """The server's `describe.limits`, read once; None while `describe` fails."""
        if self._limits is None:
            answer = await self.client.describe()
            if answer["ok"]:
                self._limits = answer["data"]["limits"]
        return self._limits

    async def check_bars(self, name: str, version: int) -> StepBars:
        """Per step, the bar each verdict question had to clear: the document's where we have it."""
        document, limits = await self.get(name, version), await self.limits()

        def for_step(step_id: str) -> BarOf:
            bars = step_bars(document, step_id, limits)
            return lambda question: bar_for(question, bars, limits)

        return for_step
