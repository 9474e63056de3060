"""The tools as a demo worker calls them, each typed with its wire shapes (`console/client/wire.py`).

A demo agent calls a server through its link (link.py), a demo person calls the engine as themselves
(`Caller`); both hand a tool name and arguments to a `send` and get the decoded envelope back.
`DemoCalls` is the console's `ToolClient` over such a `send`: the same typed tool methods, the same
`requestId` and left-out-argument rules, and the same one place where the wire is taken on trust.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from console.client.base import ToolClient
from engine.identity import Identity
from engine.tools.told import Told

Send = Callable[[str, dict[str, object]], Awaitable[object]]
"""One tool call as the worker's transport makes it: the tool's name and arguments, the envelope back."""


class Caller(Protocol):
    """The engine as the demo world calls it, as any member of the org (`Engine.call`): the envelope
    comes back as the engine builds it, untyped until `as_person` gives each tool its type."""

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class Telling(Caller, Protocol):
    """The engine as a demo person calls it, and who it told of something (`Engine.told`): a person
    reads their queue again only when it may have changed."""

    @property
    def told(self) -> Told: ...


class DemoCalls(ToolClient):
    """The fourteen tools, typed, over a demo worker's own `send`."""

    def __init__(self, identity: Identity, send: Send) -> None:
        super().__init__(identity)
        self._send = send

    async def call(self, tool: str, arguments: dict[str, object]) -> object:
        return await self._send(tool, arguments)


def as_person(caller: Caller, identity: Identity) -> DemoCalls:
    """The tools as `identity` calls them through `caller`."""

    async def send(tool: str, arguments: dict[str, object]) -> object:
        return await caller.call(identity, tool, arguments)

    return DemoCalls(identity, send)
