"""Each tool's published `outputSchema` as a validator, compiled the way an MCP client compiles it
(no registry: every `$ref` resolves inside the schema). The support modules run every envelope a test
receives through it, beside the spec's own result schema: whatever the spec accepts and this server
returns, its published schema must accept too."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry

from engine.http.tool_meta import output_schema
from engine.tools.results import RESULTS

OUTPUT_VALIDATORS = {tool: Draft202012Validator(output_schema(tool), registry=Registry()) for tool in RESULTS}


def output_problems(tool: str, envelope: Any) -> list[str]:
    """Why `envelope` breaks the output schema `tool` publishes; [] when it conforms."""
    validator = OUTPUT_VALIDATORS[tool]
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in sorted(validator.iter_errors(envelope), key=lambda e: list(e.absolute_path))
    ]
