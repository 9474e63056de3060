"""The conformance report: one line per check, a summary per group, and the JSON and JUnit forms.

Text lines are `PASS group.check (section)`, `FAIL group.check (section): expected …, got …` and
`SKIP group.check (section): reason`. The JSON form carries the same results plus what the run
created; the JUnit form maps each group to a test suite so CI systems show checks as tests.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["PASS", "FAIL", "SKIP"]
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Result:
    check: str
    section: str
    status: Status
    message: str = ""
    seconds: float = 0.0
    covers: tuple[str, ...] = ()

    @property
    def group(self) -> str:
        return self.check.split(".", 1)[0]

    def line(self) -> str:
        text = f"{self.status} {self.check} ({self.section})"
        return f"{text}: {self.message}" if self.message else text


@dataclass
class Report:
    servers: tuple[str, ...]
    schemas: str
    described: dict[str, Any]
    speed: float
    results: list[Result] = field(default_factory=list)
    runs: dict[str, dict[str, str]] = field(default_factory=dict)
    """Every run the conformance run started: id to `{process, mode}`."""
    uploads: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    """Runs still open at the end, which the runner cancelled as the operator."""
    seconds: float = 0.0

    def count(self, status: Status, group: str | None = None) -> int:
        return sum(1 for r in self.results if r.status == status and (group is None or r.group == group))

    @property
    def exit_code(self) -> int:
        return 1 if self.count("FAIL") else 0

    def header(self) -> str:
        described = self.described
        profiles = ", ".join(described.get("profiles", [])) or "none"
        return (
            f"apc conform: {', '.join(self.servers)} ({described.get('version')}; profiles {profiles}; "
            f"lease {described.get('leaseSeconds')} s; clock x{self.speed:g}; schemas: {self.schemas})"
        )

    def summary(self) -> list[str]:
        groups = list(dict.fromkeys(r.group for r in self.results))
        width = max((len(g) for g in groups), default=0)
        lines = [f"{group:<{width}}  {_counts(self, group)}" for group in groups]
        lines.append(f"{len(self.results)} checks: {_counts(self, None)} in {self.seconds:.1f} s")
        modes = Counter(run["mode"] for run in self.runs.values())
        lines.append(
            f"created {len(self.runs)} runs ({modes.get('test', 0)} test, {modes.get('live', 0)} live) and "
            f"{len(self.uploads)} uploads; cancelled {len(self.cancelled)} left open (ids in --json)"
        )
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "servers": list(self.servers),
            "schemas": self.schemas,
            "describe": self.described,
            "speed": self.speed,
            "exitCode": self.exit_code,
            "seconds": round(self.seconds, 3),
            "totals": {s.lower(): self.count(s) for s in ("PASS", "FAIL", "SKIP")},
            "groups": {
                group: {s.lower(): self.count(s, group) for s in ("PASS", "FAIL", "SKIP")}
                for group in dict.fromkeys(r.group for r in self.results)
            },
            "checks": [
                {
                    "name": r.check,
                    "group": r.group,
                    "section": r.section,
                    "status": r.status,
                    "message": r.message,
                    "seconds": round(r.seconds, 3),
                    "covers": list(r.covers),
                }
                for r in self.results
            ],
            "created": {
                "runs": [{"id": run_id, **info} for run_id, info in self.runs.items()],
                "uploads": list(self.uploads),
                "cancelled": list(self.cancelled),
            },
        }

    def to_junit(self) -> str:
        root = ET.Element(
            "testsuites",
            name="apc conform",
            tests=str(len(self.results)),
            failures=str(self.count("FAIL")),
            skipped=str(self.count("SKIP")),
            time=f"{self.seconds:.3f}",
        )
        for group in dict.fromkeys(r.group for r in self.results):
            mine = [r for r in self.results if r.group == group]
            suite = ET.SubElement(
                root,
                "testsuite",
                name=group,
                tests=str(len(mine)),
                failures=str(self.count("FAIL", group)),
                skipped=str(self.count("SKIP", group)),
                time=f"{sum(r.seconds for r in mine):.3f}",
            )
            for result in mine:
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=f"conform.{group}",
                    name=result.check.split(".", 1)[1],
                    time=f"{result.seconds:.3f}",
                )
                ET.SubElement(
                    ET.SubElement(case, "properties"), "property", name="section", value=result.section
                )
                if result.status == "FAIL":
                    ET.SubElement(case, "failure", message=result.message).text = result.line()
                elif result.status == "SKIP":
                    ET.SubElement(case, "skipped", message=result.message)
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _counts(report: Report, group: str | None) -> str:
    passed, failed, skipped = (report.count(s, group) for s in ("PASS", "FAIL", "SKIP"))
    parts = [f"{passed} passed"]
    if failed:
        parts.append(f"{failed} failed")
    if skipped:
        parts.append(f"{skipped} skipped")
    return ", ".join(parts)
