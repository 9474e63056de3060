"""How a demo agent reaches a process server: over MCP with the official SDK client, like any
third-party agent, or straight into an in-process engine for fast unit tests of its behaviour.

Both answer a tool call with the tool's `{ok, data | error}` envelope and nothing else, so the agent's
logic cannot tell them apart.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Protocol

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from console.client.connection import ConnectionFailed, envelope_of
from engine.core import Engine
from engine.identity import Identity

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

CLIENT_TIMEOUT_SECONDS = 30.0
COMPILED: dict[tuple[str, str], Validator] = {}
"""Each tool's output-schema validator as the SDK compiled it, by tool name and schema text."""


class LinkError(Exception):
    """The server could not be reached or answered with something other than a tool envelope."""


class AgentLink(Protocol):
    async def open(self) -> AgentLink: ...

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class SharedSchemas(ClientSession):
    """The SDK's session, with each tool's output schema compiled once in this process, not once per
    session: the demo's agents talk to one server, and the SDK checks a schema against the JSON Schema
    metaschema as it compiles it, a sixth of a second a tool, on the interpreter the console shares."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compiled: dict[str, tuple[dict[str, Any], Validator]] = {}
        """Tool name to the schema as listed in this session and its validator."""

    def _output_schema_validator(self, name: str, output_schema: dict[str, Any]) -> Validator:
        mine = self._compiled.get(name)
        if mine is not None and mine[0] is output_schema:
            return mine[1]
        key = (name, json.dumps(output_schema, sort_keys=True))
        validator = COMPILED.get(key)
        if validator is None:
            validator = COMPILED[key] = super()._output_schema_validator(name, output_schema)
        self._compiled[name] = (output_schema, validator)
        return validator


class McpAgentLink:
    """An MCP session over Streamable HTTP with the agent's own bearer token.

    `open()` runs the handshake and lists the tools once (the SDK validates results against the
    listed output schemas, each compiled once for every link: `SharedSchemas`). Open and close it
    from the same task: the SDK's task groups demand it.
    """

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self._token = token
        self._stack: AsyncExitStack | None = None
        self._session: ClientSession | None = None
        self.tools: list[str] = []

    async def open(self) -> McpAgentLink:
        stack = AsyncExitStack()
        try:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {self._token}"}, timeout=CLIENT_TIMEOUT_SECONDS
                )
            )
            read, write = await stack.enter_async_context(streamable_http_client(self.url, http_client=http))
            session = await stack.enter_async_context(SharedSchemas(read, write))
            await session.initialize()
            listed = await session.list_tools()
        except BaseException as exc:
            await stack.aclose()
            if isinstance(exc, Exception):
                raise LinkError(f"cannot connect to {self.url}: {exc}") from exc
            raise
        self._stack, self._session = stack, session
        self.tools = [tool.name for tool in listed.tools]
        return self

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self._session is None:
            raise LinkError("the link is not open")
        try:
            result = await self._session.call_tool(tool, arguments)
        except Exception as exc:
            raise LinkError(f"{tool}: {exc}") from exc
        try:
            return envelope_of(tool, result)
        except ConnectionFailed as exc:
            raise LinkError(str(exc)) from None

    async def close(self) -> None:
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            await stack.aclose()


class EngineLink:
    """Calls into an engine in this process as the given agent identity."""

    def __init__(self, engine: Engine, identity: Identity) -> None:
        self.engine = engine
        self.identity = identity

    async def open(self) -> EngineLink:
        return self

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.engine.call(self.identity, tool, arguments)

    async def close(self) -> None:
        return None
