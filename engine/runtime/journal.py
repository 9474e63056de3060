"""What a write adds to its run's log (`LogEntry`): kept beside the run's changes, saved with them.

Renewals and refused submissions repeat: one that follows an entry of the same kind, by the same
agent, on the same step (nothing else in between) is counted on that entry rather than stored again.
The run document remembers its last `seq` and what that entry repeats on, so a write needs no read
of the log to number or count its own entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from engine.store.base import LogEntry
from engine.store.state import SERVER, Run

REPEATS = frozenset({"renewed", "submission_refused"})


@dataclass
class Journal:
    run: Run
    entries: list[LogEntry] = field(default_factory=list)

    def add(
        self,
        kind: str,
        at: str,
        *,
        step_id: str | None = None,
        by: str | None = None,
        note: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        run = self.run
        who = None if by == SERVER else by
        tail = f"{kind}\x1f{step_id}\x1f{who}" if kind in REPEATS else None
        facts = detail or {}
        if tail is not None and tail == run.log_tail and run.log_seq > 0:
            facts = {**facts, "lastAt": at}
            last = self.entries[-1] if self.entries and self.entries[-1].seq == run.log_seq else None
            if last is not None:
                self.entries[-1] = replace(last, count=last.count + 1, note=note, detail=facts)
            else:
                self.entries.append(LogEntry(run.log_seq, at, kind, who, step_id, note, 1, facts))
            return
        run.log_seq += 1
        run.log_tail = tail
        self.entries.append(LogEntry(run.log_seq, at, kind, who, step_id, note, 1, facts))
