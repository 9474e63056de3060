"""PROCESS.md as a library: split, parse (YAML 1.2 core schema), validate, hash, model.

Public API (what the engine, the CLI and the console use):

- `load(text, folder=None) -> Loaded`: everything at once; never raises.
- `load_path(path) -> Loaded`: the same for a PROCESS.md file or a process folder.
- `parse_document(text) -> ParsedDocument`: split and parse only.
- `validate(frontmatter, body, folder=None) -> Validated`: every rule, every issue, and the model.
- `content_hash(frontmatter, body) -> str`: spec §6 rule 5.
- `parse_duration(text) -> int | None`: seconds of a spec §2.4 duration.
- `fields.check_values(fields, values, prefix) -> list[Issue]`: field values (inputs, outputs, events).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.document.durations import parse_duration
from engine.document.hashing import content_hash
from engine.document.model import (
    CHECK_PROFILE,
    FIELD_TYPES,
    JOIN,
    PARALLEL_PROFILE,
    STEP_KINDS,
    CheckQuestion,
    Field,
    Issue,
    Process,
    Route,
    Step,
)
from engine.document.parse import ParsedDocument, parse_document
from engine.document.validate import Validated, validate

__all__ = [
    "CHECK_PROFILE",
    "FIELD_TYPES",
    "JOIN",
    "MAX_DOCUMENT_BYTES",
    "PARALLEL_PROFILE",
    "PROCESS_FILE",
    "STEP_KINDS",
    "CheckQuestion",
    "Field",
    "Issue",
    "Loaded",
    "ParsedDocument",
    "Process",
    "Route",
    "Step",
    "Validated",
    "content_hash",
    "load",
    "load_path",
    "parse_document",
    "parse_duration",
    "validate",
]

PROCESS_FILE = "PROCESS.md"
MAX_DOCUMENT_BYTES = 1024 * 1024
"""A process is a page of instructions; a larger file is refused before any parsing work."""


@dataclass(frozen=True)
class Loaded:
    name: str | None
    """The written name when it is text, even if the document has issues."""
    process: Process | None
    issues: tuple[Issue, ...]
    content_hash: str | None
    """Set only for a valid document: the hash a published version would carry."""
    profiles: frozenset[str]
    text: str | None = None
    """The document exactly as read (line ends included): what a server stores, serves and hashes."""
    warnings: tuple[Issue, ...] = ()
    """What the author should look at; a document with warnings and no issues is valid."""

    @property
    def ok(self) -> bool:
        return not self.issues


def _refused(*issues: Issue) -> Loaded:
    return Loaded(name=None, process=None, issues=issues, content_hash=None, profiles=frozenset())


def load(text: str, folder: str | None = None) -> Loaded:
    """Parse, validate and hash a whole PROCESS.md; every problem is an issue, nothing raises."""
    if not isinstance(text, str):
        return _refused(Issue("", "a PROCESS.md must be text"))
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        return _refused(Issue("", f"the document is larger than {MAX_DOCUMENT_BYTES // 1024} KiB"))
    parsed = parse_document(text)
    if parsed.frontmatter is None:
        return _refused(*parsed.issues)
    body = parsed.body if parsed.body is not None else ""
    validated = validate(parsed.frontmatter, body, folder)
    name = parsed.frontmatter.get("name")
    process = validated.process
    return Loaded(
        name=name if isinstance(name, str) else None,
        process=process,
        issues=parsed.issues + validated.issues,
        content_hash=content_hash(process.frontmatter, process.body) if process is not None else None,
        profiles=validated.profiles,
        text=text,
        warnings=validated.warnings,
    )


def load_path(path: Path) -> Loaded:
    """Load a PROCESS.md file, or a process folder whose name must equal the process name (spec §2.1)."""
    folder: str | None = None
    try:
        if path.is_dir():
            folder = path.name
            path = path / PROCESS_FILE
            if not path.is_file():
                return _refused(Issue("", f"the folder '{folder}' has no {PROCESS_FILE}"))
        elif not path.is_file():
            return _refused(Issue("", f"no such file or folder: {path}"))
        with path.open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        return _refused(Issue("", f"cannot read {path}: {exc.strerror or exc}"))
    if len(data) > MAX_DOCUMENT_BYTES:
        return _refused(Issue("", f"the document is larger than {MAX_DOCUMENT_BYTES // 1024} KiB"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _refused(Issue("", f"not UTF-8 text: byte {exc.start} cannot be decoded"))
    return load(text, folder)
