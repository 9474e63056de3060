"""The JSON Schemas every result is checked against: the runner's own, or the spec's published files.

The runner ships schemas written from tools.md (`conform/schemas/`), laid out like the spec's
`schemas/core-2/` (an `index.json` naming each tool's result schema, `tool-error.json`), so
`--schemas DIR` can point at the published files instead and the same loader reads them. Every file
is registered by its `$id`, and `$ref`s resolve among the files only; nothing is fetched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

OWN = "the runner's own schemas (written from tools.md)"


class SchemaError(ValueError):
    """A schema folder that cannot be used: the message names the file."""


@dataclass(frozen=True)
class Contracts:
    source: str
    results: dict[str, Draft202012Validator]
    error: Draft202012Validator

    def problems(self, tool: str, envelope: Any) -> list[str]:
        """Every way `envelope` breaks `{ok: true, data}` with the tool's result schema, or the error
        shape `{ok: false, error}`; empty when it conforms."""
        if not isinstance(envelope, dict):
            return ["the envelope is not an object"]
        if envelope.get("ok") is True:
            if set(envelope) != {"ok", "data"}:
                return [f"a success envelope has keys {sorted(envelope)}, expected ok and data"]
            validator = self.results.get(tool)
            return [] if validator is None else _issues(validator, envelope["data"], "data")
        if envelope.get("ok") is False:
            if set(envelope) != {"ok", "error"}:
                return [f"an error envelope has keys {sorted(envelope)}, expected ok and error"]
            issues = _issues(self.error, envelope["error"], "error")
            message = envelope["error"].get("message") if isinstance(envelope["error"], dict) else None
            if isinstance(message, str) and not message.strip():
                issues.append("error/message: blank")
            return issues
        return [f"ok is {json.dumps(envelope.get('ok'))}, expected true or false"]


def _issues(validator: Draft202012Validator, value: Any, where: str) -> list[str]:
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join([where, *map(str, e.absolute_path)])}: {e.message}" for e in errors]


def load(directory: Path | None = None) -> Contracts:
    """The runner's own schemas, or those in `directory` (a copy of the spec's `schemas/core-2`)."""
    root: Traversable = resources.files("conform") / "schemas" if directory is None else directory
    source = OWN if directory is None else str(directory)
    try:
        index = json.loads((root / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SchemaError(f"{source}: cannot read index.json ({exc})") from None
    documents = _documents(root, source)
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in documents.values()
    )

    def validator(relative: str) -> Draft202012Validator:
        schema = documents.get(relative)
        if schema is None:
            raise SchemaError(f"{source}: index.json names {relative}, which has no $id or is missing")
        return Draft202012Validator(schema, registry=registry)

    try:
        tools = {tool: validator(files["result"]) for tool, files in index["tools"].items()}
        error = validator(index["shared"]["tool-error"])
    except (KeyError, TypeError) as exc:
        raise SchemaError(f"{source}: index.json lacks {exc}") from None
    return Contracts(source, tools, error)


def _documents(root: Traversable, source: str) -> dict[str, dict[str, Any]]:
    """Every JSON file under `root` that has an `$id`, by its path relative to `root`."""
    found: dict[str, dict[str, Any]] = {}
    pending: list[tuple[Traversable, str]] = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append((entry, f"{prefix}{entry.name}/"))
            elif entry.name.endswith(".json"):
                try:
                    schema = json.loads(entry.read_text(encoding="utf-8"))
                except ValueError as exc:
                    raise SchemaError(f"{source}: {prefix}{entry.name} is not JSON ({exc})") from None
                if isinstance(schema, dict) and "$id" in schema:
                    found[prefix + entry.name] = schema
    return found
