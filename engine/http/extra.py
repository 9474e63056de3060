"""Tools a server offers beside the fourteen of the protocol: a small registry the endpoint serves.

The fourteen tools keep their exact contracts and `describe` keeps listing only them; an extra tool
appears in MCP `tools/list` (with its own argument and output schemas, title and hints) and is
answered by its own handler, for the identities it admits. Its result is the same envelope as any
tool's (`{ok: true, data}` or `{ok: false, error}`), so clients read it the same way. Calls are
metered and logged like the others.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import TypeAdapter

from engine.identity import Identity
from engine.tools.results import Failure

Handler = Callable[[Identity, dict[str, Any]], Awaitable[dict[str, Any]]]

FORBIDDEN: dict[str, Any] = {
    "ok": False,
    "error": {"code": "forbidden", "message": "this tool is not offered to this identity"},
}


def operators_only(identity: Identity) -> bool:
    return identity.kind == "person" and identity.operator


@dataclass(frozen=True)
class ExtraTool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    data_schema: dict[str, Any]
    """The schema of `data` in a successful answer."""
    handler: Handler
    may_call: Callable[[Identity], bool] = operators_only
    read_only: bool = False
    destructive: bool = False

    def definition(self) -> types.Tool:
        failure = TypeAdapter(Failure).json_schema()
        success = {
            "type": "object",
            "properties": {"ok": {"const": True}, "data": self.data_schema},
            "required": ["ok", "data"],
        }
        output = {
            "type": "object",
            "title": f"{self.name} envelope",
            "description": f"ok: true with the {self.name} result as data, or ok: false with the error.",
            "anyOf": [success, {k: v for k, v in failure.items() if k != "$defs"}],
            **({"$defs": failure["$defs"]} if "$defs" in failure else {}),
        }
        hints = types.ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            open_world_hint=False,
        )
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=output,
            annotations=hints,
        )


class WithExtraTools:
    """An engine as the endpoint sees it, with extra tools beside its own.

    `tools` lists both (for metrics labels and the endpoint); `call` answers an extra tool by its
    handler, after checking who may call it, and leaves everything else to the engine.
    """

    def __init__(self, engine: Any, extra: Sequence[ExtraTool]) -> None:
        self.engine = engine
        self.extra = {tool.name: tool for tool in extra}
        clash = set(self.extra) & set(engine.tools)
        if clash:
            raise ValueError(f"extra tools may not replace the engine's: {', '.join(sorted(clash))}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    @property
    def tools(self) -> list[str]:
        return [*self.engine.tools, *self.extra]

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        extra = self.extra.get(tool)
        if extra is None:
            result: dict[str, Any] = await self.engine.call(identity, tool, arguments)
            return result
        if not extra.may_call(identity):
            return FORBIDDEN
        return await extra.handler(identity, arguments)
