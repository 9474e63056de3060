"""Published processes (spec §7, §6 rule 5): checking, binding, numbering, and the parsed-version cache.

A version never changes once written, so its parsed `Process` is cached for the life of the engine.
Publishing refuses, with every issue at once, a document with issues, a role not bound to a group of
the organization, and a process needing a profile or tool this server does not offer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine import document
from engine.document.model import Process
from engine.org import OrgConfig
from engine.store.base import Store, Transaction, VersionRecord


@dataclass(frozen=True)
class PublishResult:
    ok: bool
    name: str | None
    version: int | None
    created: bool
    issues: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What the validator warned about: never a reason to refuse (spec §2 refuses only its rules)."""


@dataclass(frozen=True)
class Draft:
    """A document checked and bound, ready to become the next version."""

    name: str
    text: str
    process: Process
    content_hash: str
    bindings: dict[str, str]
    warnings: list[str] = field(default_factory=list)


class Catalog:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._parsed: dict[tuple[str, int], Process] = {}
        self._records: dict[tuple[str, int], VersionRecord] = {}
        """Versions read by number: a write pins its run's version without a read of the store."""

    async def get(
        self, name: str, version: int | None = None, tx: Transaction | None = None
    ) -> tuple[VersionRecord, Process] | None:
        """The version (the latest without `version`: read in `tx` when a write asks, so the write does
        not wait for the store's read connection)."""
        if version is None:
            record = await (self._store if tx is None else tx).latest_version(name)
        elif (record := self._records.get((name, version))) is None:
            record = await self._store.get_version(name, version)
            if record is not None:
                self._records[(name, version)] = record
        return None if record is None else (record, self.parsed(record))

    def parsed(self, record: VersionRecord) -> Process:
        key = (record.name, record.version)
        process = self._parsed.get(key)
        if process is None:
            loaded = document.load(record.text)
            if loaded.process is None:
                raise RuntimeError(f"stored version {key} no longer parses")
            process = self._parsed[key] = loaded.process
        return process


def draft(
    source: Path, bind: dict[str, str], org: OrgConfig, profiles: tuple[str, ...], tools: tuple[str, ...]
) -> tuple[Draft | None, list[str]]:
    """Load, check and bind a process folder or PROCESS.md; a draft, or every issue."""
    loaded = document.load_path(source)
    issues = [str(i) for i in loaded.issues]
    process = loaded.process
    if process is None or loaded.content_hash is None:
        return None, issues or ["the document could not be loaded"]
    for profile in sorted(loaded.profiles):
        if profile not in profiles:
            issues.append(f"profile {profile}: not offered by this server")
    for tool, needed in _tools_needed(process).items():
        if tool not in tools:
            issues.append(f"tool {tool}: needed by {needed}, not offered by this server")
    for role in process.roles:
        group = bind.get(role)
        if group is None:
            issues.append(f"bind.{role}: required, the group that works role '{role}'")
        elif group not in org.groups:
            issues.append(f"bind.{role}: unknown group '{group}'")
    issues.extend(f"bind.{role}: not a role of this process" for role in bind if role not in process.roles)
    if issues or loaded.text is None:
        return None, issues
    # The text the hash was computed over, not a second read: reading it again in text mode would
    # turn CRLF into LF, and the stored text would no longer be the one hashed (spec §6 rule 5).
    warnings = [str(w) for w in loaded.warnings]
    return Draft(process.name, loaded.text, process, loaded.content_hash, dict(bind), warnings), []


def _tools_needed(process: Process) -> dict[str, str]:
    needed: dict[str, str] = {}
    for step in process.steps:
        if step.evidence and "file" in step.evidence:
            needed.setdefault("upload", f"steps.{step.id}.evidence")
        if step.kind == "wait_for":
            needed.setdefault("send_event", f"steps.{step.id}")
        if step.kind in ("task", "approve"):
            needed.setdefault("decide", f"steps.{step.id}")
    return needed
