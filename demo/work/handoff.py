"""Reading a claim's `handoff` the way guides/adding-support.md asks: first, and acting on each part.

The previous attempt at a step may have left `progress` (its lease ended), `issues` (its submission
was refused), `returned` (a person sent an escalation back with a note) and `check` (a model check
refused it, or was unsure and a person returned it; its questions are the `check:` lines of `issues`).
A demo agent resumes after the progress it reads, fixes every issue named, reconsiders what each
check question is about (revise.py), follows the returned note instead of escalating again, and says
in its summary what it found and did about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from console.client import wire
from demo.work.revise import CheckLine, check_lines

_PARTS_DONE = re.compile(r"^Done (\d+) of (\d+) parts")


@dataclass(frozen=True)
class Handoff:
    progress: str | None = None
    issues: tuple[str, ...] = ()
    returned_note: str | None = None
    returned_by: str | None = None
    check_verdict: str | None = None

    @classmethod
    def read(cls, raw: wire.Handoff | None) -> Handoff:
        raw = raw or {}
        returned = raw.get("returned")
        check = raw.get("check")
        return cls(
            progress=raw.get("progress"),
            issues=tuple(raw.get("issues") or ()),
            returned_note=returned["note"] if returned else None,
            returned_by=returned["by"] if returned else None,
            check_verdict=check["verdict"] if check else None,
        )

    @property
    def empty(self) -> bool:
        return self == Handoff()

    @property
    def resumed(self) -> bool:
        """Someone worked this step before and was interrupted: do not interrupt it again."""
        return self.progress is not None or bool(self.issues)

    @property
    def check_lines(self) -> list[CheckLine]:
        return check_lines(self.issues)

    @property
    def other_issues(self) -> list[str]:
        """The issues that are not a check's questions: objective rules the submission broke."""
        return [issue for issue in self.issues if CheckLine.parse(issue) is None]

    def parts_done(self, parts: int) -> int:
        """How many of `parts` the progress note says are done (0 when it does not say)."""
        match = _PARTS_DONE.match(self.progress or "")
        if match is None or int(match.group(2)) != parts:
            return 0
        return min(int(match.group(1)), parts)

    def acknowledgements(self) -> list[str]:
        """One sentence per part of the handoff, saying what this attempt did about it.

        The check's questions get theirs from the revision that answers them (revise.py).
        """
        lines: list[str] = []
        if self.progress is not None:
            lines.append(
                f"Picked up after an expired lease from the note '{self.progress}' and did not redo that part."
            )
        if other := self.other_issues:
            lines.append(
                f"The previous submission was refused ({'; '.join(other)}); this one fixes each issue."
            )
        if self.returned_note is not None:
            who = f" by {self.returned_by}" if self.returned_by else ""
            lines.append(f"Returned{who} with the note '{self.returned_note}'; followed it.")
        return lines
