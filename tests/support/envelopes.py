"""The envelope every tool answers with, checked twice: against the spec's result (or error) schema and
against the `outputSchema` the tool publishes, compiled the way an MCP client compiles it (no registry:
every `$ref` resolves inside the schema). Whatever the spec accepts and this server returns, its
published schema must accept too.

`ok(envelope, tool)` asserts success and returns `data`; `err(envelope, code, issues)` asserts the error.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry

from engine.http.tool_meta import output_schema
from engine.tools.results import RESULTS
from tests.support.schemas import SCHEMA_FILES, validator

OUTPUT_VALIDATORS = {tool: Draft202012Validator(output_schema(tool), registry=Registry()) for tool in RESULTS}
RESULT_VALIDATORS = {
    name.split("/")[1].removesuffix(".result.json"): validator(name)
    for name in SCHEMA_FILES
    if name.endswith(".result.json")
}
"""The spec's result schema of each tool, by tool name."""
ERROR_VALIDATOR = validator("tool-error.json")


def output_problems(tool: str, envelope: Any) -> list[str]:
    """Why `envelope` breaks the output schema `tool` publishes; [] when it conforms."""
    validator = OUTPUT_VALIDATORS[tool]
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in sorted(validator.iter_errors(envelope), key=lambda e: list(e.absolute_path))
    ]


def ok(envelope: dict[str, Any], tool: str) -> Any:
    """Assert success and that `data` is exactly what the tool's result schema allows; `data` is returned."""
    assert set(envelope) == {"ok", "data"}, envelope
    assert envelope["ok"] is True, envelope
    errors = sorted(RESULT_VALIDATORS[tool].iter_errors(envelope["data"]), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert output_problems(tool, envelope) == [], f"{tool}: the published output schema refuses its result"
    return envelope["data"]


def err(envelope: dict[str, Any], code: str, issues: list[str] | None = None) -> dict[str, Any]:
    """Assert the error code (and issues) and that the error matches tool-error.json; it is returned."""
    assert set(envelope) == {"ok", "error"}, envelope
    assert envelope["ok"] is False
    error = envelope["error"]
    assert [e.message for e in ERROR_VALIDATOR.iter_errors(error)] == []
    assert output_problems("describe", envelope) == [], "the published output schema refuses an error"
    assert error["code"] == code, error
    if issues is not None:
        assert error.get("issues") == issues, error
    return error
