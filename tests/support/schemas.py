"""The core-2 JSON Schemas, loaded once for every test folder: each file registered by its `$id`, so
validators resolve the `$ref`s between them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "agentprocess"
"""The reference copy of the specification, beside the repository."""
SCHEMAS = SPEC / "schemas" / "core-2"


def _load() -> tuple[Registry, dict[str, dict[str, Any]]]:
    files: dict[str, dict[str, Any]] = {}
    for path in sorted(SCHEMAS.rglob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        if "$id" in schema:
            files[path.relative_to(SCHEMAS).as_posix()] = schema
    registry: Registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in files.values()
    )
    return registry, files


REGISTRY, SCHEMA_FILES = _load()
"""The registry of every schema, and each schema by its path relative to core-2 (`tools/claim.result.json`)."""


def validator(relative: str) -> Draft202012Validator:
    return Draft202012Validator(SCHEMA_FILES[relative], registry=REGISTRY)
