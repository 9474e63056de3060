"""The embedded mode: our engine in the console's own process, called through `Engine.call`.

It is also the only connection with the admin features the protocol leaves to a server: publishing,
acting as another person of the org, and reading a published version's document for the map.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from console.client.base import Capabilities, RequestIds, ToolClient
from console.client.envelope import failure
from console.client.files import FetchedFile, Progress
from console.client.run_log import RUN_LOG_TOOL
from console.client.wire import Failure
from engine.core import Engine
from engine.document import Process, load, load_path
from engine.identity import Identity
from engine.tools.catalog import PublishResult

T = TypeVar("T")
Hop = Callable[[Coroutine[Any, Any, T]], Awaitable[T]]
"""How a call reaches the engine's loop: `EngineThread.run` when the engine has a thread of its own."""


async def here(work: Coroutine[Any, Any, T]) -> T:
    """No hop: the engine runs on the caller's loop."""
    return await work


class LocalClient(ToolClient):
    def __init__(
        self,
        engine: Engine,
        identity: Identity,
        *,
        admin: bool = True,
        request_ids: RequestIds | None = None,
        hop: Hop[Any] = here,
    ) -> None:
        super().__init__(identity, request_ids=request_ids)
        self.engine = engine
        self.capabilities = Capabilities(publish=admin, switch_identity=admin, process_document=True)
        self._hop = hop

    async def call(self, tool: str, arguments: dict[str, object]) -> dict[str, Any]:
        if tool == RUN_LOG_TOOL:
            logged: dict[str, Any] = await self._hop(self.engine.run_log(self.identity, arguments))
            return logged
        answer: dict[str, Any] = await self._hop(self.engine.call(self.identity, tool, arguments))
        return answer

    async def extra_tools(self) -> frozenset[str]:
        return frozenset({RUN_LOG_TOOL})

    async def fetch_file(self, url: str, progress: Progress | None = None) -> FetchedFile | Failure:
        """Serve a signed URL the way the HTTP file route does, without needing the endpoint running."""
        parts = urlsplit(url)
        file_id = parts.path.rsplit("/", 1)[-1]
        query = parse_qs(parts.query)
        expires, signature = query.get("expires", [""])[0], query.get("sig", [""])[0]
        if not expires.isdigit() or not self.engine.files.verify_signed(file_id, int(expires), signature):
            return failure("stale", "this file link has expired; refresh the run to get a new one")
        stored = await self._hop(self.engine.files.open(file_id))
        if stored is None:
            return failure("not_found", "this file is not available")
        content = await asyncio.to_thread(stored.path.read_bytes)
        if progress is not None:
            progress(len(content), len(content))
        return FetchedFile(content, stored.file_name, stored.content_type)

    async def publish(self, source: Path, bind: dict[str, str] | None = None) -> PublishResult:
        """Publish a folder; without a binding, each role goes to the group of the same name."""
        if bind is None:
            loaded = load_path(source)
            bind = {role: role for role in (loaded.process.roles if loaded.process is not None else ())}
        published: PublishResult = await self._hop(self.engine.publish(source, bind))
        return published

    def people(self) -> list[Identity]:
        org = self.engine.org
        return [
            Identity("person", p.email, p.operator)
            for p in sorted(org.people.values(), key=lambda p: p.email)
        ]

    def switch_identity(self, identity: Identity) -> None:
        if not self.capabilities.switch_identity:
            raise PermissionError("switching identity is not offered by this connection")
        self.identity = identity

    async def process_document(self, name: str, version: int) -> Process | None:
        text: str | None = await self._hop(self.engine.process_text(name, version))
        return None if text is None else load(text).process
