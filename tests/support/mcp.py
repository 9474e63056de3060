"""Tests reach an endpoint the way agents do: one official MCP SDK session per bearer token.

`McpCaller` answers each tool call with the tool's `{ok, data | error}` envelope (after the SDK has
checked a successful result against the tool's output schema) and lists tools as plain JSON. It opens
on first use. The SDK's task groups must be left by the task that entered them, so one owner task
holds the session: a fixture may open it in the test and close it in its teardown.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


class McpCaller:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self._token = token
        self._opened: asyncio.Future[ClientSession] | None = None
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        self.server_info: dict[str, Any] | None = None

    async def __aenter__(self) -> McpCaller:
        await self.session()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def session(self) -> ClientSession:
        if self._opened is None:
            self._opened = asyncio.get_running_loop().create_future()
            self._owner = asyncio.create_task(self._own(self._opened))
        return await asyncio.shield(self._opened)

    async def _own(self, opened: asyncio.Future[ClientSession]) -> None:
        try:
            async with AsyncExitStack() as stack:
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers={"Authorization": f"Bearer {self._token}"}, timeout=30.0)
                )
                read, write = await stack.enter_async_context(
                    streamable_http_client(self.url, http_client=http)
                )
                session = await stack.enter_async_context(ClientSession(read, write))
                initialized = await session.initialize()
                await session.list_tools()  # the output schemas the SDK checks results against, once
                self.server_info = initialized.model_dump(by_alias=True, exclude_none=True, mode="json")
                opened.set_result(session)
                await self._stop.wait()
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            if not isinstance(exc, Exception):
                raise

    async def initialize(self) -> dict[str, Any]:
        """The server's `initialize` answer, as JSON."""
        await self.session()
        assert self.server_info is not None
        return self.server_info

    async def list_tools(self) -> list[dict[str, Any]]:
        listed = await (await self.session()).list_tools()
        return [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in listed.tools]

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await (await self.session()).call_tool(tool, arguments or {})
        structured = result.structured_content
        if isinstance(structured, dict) and "ok" in structured:
            return structured
        texts = [getattr(item, "text", None) for item in result.content]
        envelope = json.loads(next(text for text in texts if isinstance(text, str)))
        assert isinstance(envelope, dict) and "ok" in envelope, envelope
        return envelope

    async def aclose(self) -> None:
        self._stop.set()
        if self._owner is not None:
            await self._owner
